"""Rates of an active (judge-guided) sample: the weighted human rate and the judge-corrected
rate by active inference (Zrnic & Candès 2024), per slice, from each unit's stored probability
and the draws' stored budgets (annotate.stats.active does the arithmetic).

On such a sample `weighted_human` and `judge_corrected` are these estimators (PPI's and the
stratum weights' equal-probability assumption does not hold there); Rogan-Gladen and the error
types weight by design_weights. Drawn traces without gold are taken as missing at random within
their draw and stratum: their draw's probabilities are scaled by the share labelled there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotate.errors import counted
from annotate.rates.inputs import RatesInput, per_trace_gold
from annotate.stats import active as stats
from annotate.stats import rates as est

REPLACED = ("weighted_human", "judge_corrected")  # estimators computed here on an active sample


def rate(
    inputs: RatesInput,
    part: pd.DataFrame,
    level: str,
    name: str,
    least: int,
) -> est.Rate:
    """`name` (one of REPLACED) on an active sample, from each labelled trace's gold at `level`."""
    gold = per_trace_gold(inputs.claims, inputs.responses, level)
    return active_rate(inputs, part, level, gold, name == "judge_corrected", least)


def design_weights(inputs: RatesInput, units: pd.DataFrame, equal: pd.Series) -> pd.Series:
    """Each labelled unit's weight: `equal` (N_h / m_h) unless the sample is active; then its
    1 / pi, scaled so that a stratum's labelled units weigh its N_h (Hajek), which is N_h / m_h
    again where a stratum's probabilities are equal."""
    if inputs.active is None:
        return equal
    raw = units["trace_id"].map(_unit_pi(inputs)).rdiv(1.0)
    scale = units["stratum"].map(inputs.populations).astype(float) / raw.groupby(
        units["stratum"]
    ).transform("sum")
    return raw * scale


def _unit_pi(inputs: RatesInput) -> pd.Series:
    assert inputs.active is not None
    return inputs.active.units.set_index("trace_id")["pi"]


def _judge_parts(part: pd.DataFrame, level: str) -> tuple[np.ndarray, np.ndarray]:
    """The judge's numerator and denominator per frame row: a response's outcome (0 where the
    judge gave none) over 1; unsupported claim verdicts over judged claims."""
    if level == "response":
        traces = part["traces"].to_numpy(float)
        return part["jr"].fillna(0.0).to_numpy(float) * traces, traces
    return part["jcu"].to_numpy(float), part["jcn"].to_numpy(float)


def _responded(inputs: RatesInput, gold: pd.DataFrame) -> pd.DataFrame:
    """Every unit with its draw, stratum, probability and its draw-and-stratum's share with
    gold at this level (`gold`: trace_id, num, den)."""
    assert inputs.active is not None
    units = inputs.active.units.merge(inputs.units[["trace_id", "stratum"]], on="trace_id")
    units = units.assign(labelled=units["trace_id"].isin(set(gold["trace_id"])))
    share = units.groupby(["draw", "stratum"])["labelled"].transform("mean")
    return units.assign(response=share)


def active_rate(
    inputs: RatesInput,
    part: pd.DataFrame,
    level: str,
    gold: pd.DataFrame,
    judged: bool,
    least: int,
) -> est.Rate:
    """The slice's rate (`part`: its frame rows) by active inference when `judged`, else the
    1/pi-weighted human rate; `gold`: trace_id, num, den per labelled trace; `least`: the
    labelled traces a slice needs."""
    method = _method(inputs, level, judged)
    if judged and inputs.judge is None:
        return est.Rate(None, None, None, 0, method, "no judge verdicts in the store")
    units = _responded(inputs, gold)
    units = units[units["trace_id"].isin(set(part["trace_id"].dropna()))]
    units = units.merge(gold, on="trace_id", how="left").fillna({"num": 0.0, "den": 0.0})
    labelled = int(units["labelled"].sum())
    if labelled < least:
        reason = f"too little data: {counted(labelled, 'labelled trace')} (< {least})"
        return est.Rate(None, None, None, labelled, method, reason)
    f_num, f_den = _judge_parts(part, level)
    by_trace = pd.DataFrame({"trace_id": part["trace_id"], "fn": f_num, "fd": f_den})
    units = units.merge(by_trace.dropna(subset=["trace_id"]), on="trace_id", how="left")
    scale = 1.0 if judged else 0.0
    errors = (
        units["num"].to_numpy(float) - scale * units["fn"].to_numpy(float),
        units["den"].to_numpy(float) - scale * units["fd"].to_numpy(float),
    )
    sample = stats.Sample(
        units["draw"].to_numpy(int),
        (units["pi"] * units["response"]).to_numpy(float),
        units["labelled"].to_numpy(bool),
        units["response"].to_numpy(float),
        _shares(inputs),
    )
    totals = (np.asarray(scale * f_num.sum()), np.asarray(scale * f_den.sum()))
    rate, low, high, _ = stats.active_ratio(totals, errors, sample, judged=judged)
    n = int(units["den"].sum())
    if not np.isfinite(rate):
        return est.Rate(None, None, None, n, method, "no gold in this slice")
    return est.Rate(float(rate), float(low), float(high), n, method)


def _shares(inputs: RatesInput) -> list[float]:
    """Each draw's weight in the combination: its budget, fixed before it was drawn."""
    assert inputs.active is not None
    draws = inputs.active.draws.sort_values("draw")
    return [float(b) for b in draws["budget"]]


def _method(inputs: RatesInput, level: str, judged: bool) -> str:
    assert inputs.active is not None
    draws = len(inputs.active.draws)
    combined = (
        f"{counted(draws, 'draw')} combined by their budgets (sequential: valid for the whole "
        "adaptively drawn sample)"
    )
    if judged:
        return (
            f"{stats.METHOD} on judge {inputs.judge}: the judge's {level} outcomes on every frame "
            f"trace of the slice plus (gold - judge) / pi on the labelled traces; {combined}; "
            "normal interval with Poisson sampling's variance, at least that of "
            f"{stats.JUDGE_PSEUDO:g} pseudo-miss and false alarm"
        )
    return (
        f"{level} rate weighted by each trace's own 1/pi (Hajek ratio) under the active design, "
        f"{stats.METHOD} without the judge; {combined}; normal interval with Poisson sampling's "
        f"variance, at least that of {stats.PSEUDO_COUNT:g} pseudo-trace of each outcome"
    )
