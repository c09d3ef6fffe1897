"""Rates per slice from a RatesInput: the four estimators, each row saying which it is (on an
active sample, weighted_human and judge_corrected by active inference: rates.active_rates).

weighted_human: gold on the sample, each trace weighted N_h / m_h (m_h: the stratum's traces
with gold at this level), a ratio estimator; BCa bootstrap resampling traces within strata.
judge_raw: the judge's share over the slice's frame traces it read (what a dashboard shows).
judge_corrected: PPI++ (as ppi-python) per stratum, combined with the strata's population shares.
rogan_gladen: the raw rate corrected by the judge's design-weighted sensitivity and specificity
on gold, with a bootstrap moving the raw rate and the calibration together.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from annotate.errors import counted, stratum_label
from annotate.rates import active_rates, gaps
from annotate.rates import rogan_gladen as rg
from annotate.rates.clustered import clustered
from annotate.rates.inputs import RatesInput, labelled_units
from annotate.stats import ppi
from annotate.stats import rates as est
from annotate.stats.resamples import resample_weights

ESTIMATORS = ("weighted_human", "judge_raw", "judge_corrected", "rogan_gladen")
_PAIRED = {"judge_corrected", "rogan_gladen"}  # the estimators reading (gold, judge) pairs
_READ = {"trace_id", "stratum", "traces", "jcu", "jcn", "jr", "labelled"}  # of a slice's rows
LEVELS = ("claim", "response")
MIN_TRACES = 10  # labelled traces a slice needs for a human rate
MIN_PAIRS = 10  # (gold, judge) pairs a slice needs before the judge counts as calibrated there
MIN_STRATUM_PAIRS = 2  # and in each of its strata (PPI needs a variance per stratum)
DEFAULT_THRESHOLD = 0.10
RESAMPLES, SEED = 1000, 0  # the bootstrap's, unless a caller says otherwise


def slice_keys(frame: pd.DataFrame, by: Sequence[str]) -> list[dict[str, Any]]:
    """The overall slice, then every combination of the `by` values present in the frame."""
    found: list[dict[str, Any]] = [{}]
    if by:
        distinct = frame[list(by)].drop_duplicates()  # before the per-row Python work
        combos = distinct.astype(object).where(distinct.notna(), None)
        unique = {tuple(r) for r in combos.itertuples(index=False)}
        ordered = sorted(unique, key=lambda r: tuple((v is None, str(v)) for v in r))
        found += [dict(zip(by, combo, strict=True)) for combo in ordered]
    return found


def _mask(table: pd.DataFrame, values: Mapping[str, Any]) -> np.ndarray:
    mask = np.ones(len(table), dtype=bool)
    for column, value in values.items():
        col = table[column]
        mask &= (col.isna() if value is None else col == value).to_numpy()
    return mask


class Design:
    """The labelled traces of one level, their weights and the shared bootstrap resamples."""

    def __init__(self, inputs: RatesInput, level: str, resamples: int, seed: int) -> None:
        units = labelled_units(inputs.units, inputs.claims, inputs.responses, level)
        labelled = units.groupby("stratum")["trace_id"].transform("count")
        populations = units["stratum"].map(inputs.populations).astype(float)
        units = units.assign(w=active_rates.design_weights(inputs, units, populations / labelled))
        self.units = units.merge(inputs.frame.drop(columns=["stratum"]), on="trace_id", how="left")
        self.features = self.units[["num", "den"]].to_numpy(float) * self.units[["w"]].to_numpy()
        draws, _, _ = resample_weights(
            list(self.units["trace_id"]), resamples, seed, list(self.units["stratum"])
        )
        self.draws, self.resamples, self.seed = draws, resamples, seed


def weighted_human(
    design: Design, values: Mapping[str, Any], level: str, part: pd.DataFrame
) -> est.Rate:
    """`part`: the frame traces of the slice; a stratum of it with no gold at this level makes
    the slice's rate unknown (the labelled strata alone would stand in for it)."""
    mask = _mask(design.units, values)
    members = np.flatnonzero(mask)
    traces = len(members)
    n = int(design.units.loc[mask, "den"].sum())
    strata = design.units.loc[mask, "stratum"].nunique()
    method = (
        f"{level} rate weighted by 1/pi (N_h / labelled n_h), ratio estimator; BCa bootstrap over "
        f"{traces} traces within {strata} strata, {design.resamples} resamples, seed {design.seed}"
    )
    if traces < MIN_TRACES:
        reason = f"too little data: {counted(traces, 'labelled trace')} (< {MIN_TRACES})"
        return est.Rate(None, None, None, n, method, reason)
    gap = gaps.strata_without_gold(set(design.units["stratum"]), part, level)
    if gap:
        return est.Rate(None, None, None, n, method, gap)
    features = np.where(mask[:, None], design.features, 0.0)
    found = est.weighted_ratio(features, design.draws, members, strata)
    if found is None:
        return est.Rate(None, None, None, n, method, "no gold in this slice")
    rate, low, high = found
    if math.isnan(low):
        return est.Rate(rate, None, None, n, method, "too few traces per stratum for an interval")
    # A bootstrap collapses at 0% or 100%: reach out to Wilson's bounds at the same point and n.
    wide_low, wide_high = est.wilson_at(rate, n)
    return est.Rate(
        rate, min(low, wide_low), max(high, wide_high), n, method + "; at least Wilson's"
    )


def judge_raw(
    inputs: RatesInput, part: pd.DataFrame, level: str, values: Mapping[str, Any]
) -> est.Rate:
    """`part`: the frame traces of the slice (a row stands for `traces` traces)."""
    method = (
        f"judge {inputs.judge}: share of its {level} verdicts on the {traces_read(part, level):,} "
        f"of the slice's {int(part['traces'].sum()):,} frame traces it read; Wilson"
    )
    if inputs.judge is None:
        return est.Rate(None, None, None, 0, method, "no judge verdicts in the store")
    if _not_by_strata(inputs, values):
        return est.Rate(None, None, None, 0, method, inputs.frame_elsewhere)
    if level == "claim":
        return est.wilson_rate(int(part["jcu"].sum()), int(part["jcn"].sum()), method)
    judged = part[part["jr"].notna()]
    hits = int(judged.loc[judged["jr"] == 1, "traces"].sum())
    return est.wilson_rate(hits, int(judged["traces"].sum()), method)


def traces_read(part: pd.DataFrame, level: str) -> int:
    """The slice's frame traces with a judge verdict at `level` (a claim judged, or an outcome
    for the response): the judge may have read fewer than the frame holds."""
    read = part["jcn"] > 0 if level == "claim" else part["jr"].notna()
    return int(part.loc[read, "traces"].sum())


def _not_by_strata(inputs: RatesInput, values: Mapping[str, Any]) -> bool:
    """A source sample's undrawn traces are known per stratum: no judge rate over a slice
    by other columns."""
    if not inputs.frame_elsewhere:
        return False
    return not inputs.judge_frame_known or not set(values) <= set(inputs.strata_columns)


def _pairs(inputs: RatesInput, level: str) -> pd.DataFrame:
    """(trace_id, stratum, gold, judge) for each labelled unit with a settled judge outcome."""
    if level == "response":
        found = inputs.responses.merge(inputs.frame[["trace_id", "jr"]], on="trace_id")
        found = found.dropna(subset=["jr"]).rename(columns={"jr": "judge"})
    else:
        outcomes = inputs.judge_claims[
            inputs.judge_claims["outcome"].isin(["supported", "unsupported"])
        ]
        found = inputs.claims.merge(outcomes, on=["trace_id", "claim_index"])
        found = found.assign(judge=(found["outcome"] == "unsupported").astype(float))
    strata = inputs.units[["trace_id", "stratum"]].drop_duplicates("trace_id")
    return found[["trace_id", "gold", "judge"]].merge(strata, on="trace_id")


def with_pairs(inputs: RatesInput, level: str) -> tuple[pd.DataFrame, RatesInput]:
    """The level's (gold, judge) pairs with each trace's slice values, and the inputs with the
    frame marking the traces those pairs come from (PPI's labelled set)."""
    pairs = _pairs(inputs, level)
    values = inputs.frame.drop(columns=["stratum", "jcu", "jcn", "jr", "unmapped", "traces"])
    values = values[values["trace_id"].notna()]
    pairs = pairs.merge(values, on="trace_id", how="left")
    labelled = inputs.frame["trace_id"].isin(set(pairs["trace_id"]))
    return pairs, replace(inputs, frame=inputs.frame.assign(labelled=labelled.to_numpy(bool)))


def judge_corrected(
    inputs: RatesInput,
    frame: pd.DataFrame,
    values: Mapping[str, Any],
    level: str,
    pairs: pd.DataFrame,
) -> est.Rate:
    in_slice = pairs[_mask(pairs, values)]
    method = (
        f"PPI++ (power-tuned, as ppi-python) per stratum on judge {inputs.judge}"
        + _rubric(inputs)
        + f", combined with the strata's population shares; normal interval, each stratum's standard error at least that of one pseudo-count of misses and false alarms at its tuned lambda (the gold labels' own mean where that is narrower); {level}s as units"
    )
    if inputs.judge is None:
        return est.Rate(None, None, None, 0, method, "no judge verdicts in the store")
    if _not_by_strata(inputs, values):
        return est.Rate(None, None, None, len(in_slice), method, inputs.frame_elsewhere)
    strata, reason = _ppi_strata(frame, in_slice, level)
    if reason:
        return est.Rate(
            None, None, None, len(in_slice), method, f"judge not calibrated here: {reason}"
        )
    rate, low, high = ppi.ppi_stratified(strata)
    return est.Rate(rate, low, high, len(in_slice), method)


def _rubric(inputs: RatesInput) -> str:
    versions = inputs.rubric_versions
    return f" (rubric version {', '.join(map(str, versions))})" if versions else ""


def _ppi_strata(
    frame: pd.DataFrame, pairs: pd.DataFrame, level: str
) -> tuple[list[ppi.StratumData], str | None]:
    if len(pairs) < MIN_PAIRS:
        return [], f"{counted(len(pairs), 'unit')} with gold and a judge verdict (< {MIN_PAIRS})"
    found = []
    for stratum, part in frame.groupby("stratum", sort=True):
        rest = part[~part["labelled"].to_numpy(bool)]
        if level == "response":  # the stratum's traces: its population share
            share = float(part["traces"].sum())
            verdicts = float(part.loc[part["jr"].notna(), "traces"].sum())
            hits = int(rest.loc[rest["jr"] == 1, "traces"].sum())
            n = int(rest.loc[rest["jr"].notna(), "traces"].sum())
        else:  # claims are known only where the judge read them
            share = verdicts = float(part["jcn"].sum())
            hits, n = int(rest["jcu"].sum()), int(rest["jcn"].sum())
        unlabelled = np.r_[np.ones(hits), np.zeros(n - hits)]
        traces = int(part["traces"].sum())
        if not traces:
            continue
        if not verdicts:
            return [], (
                f"stratum {stratum_label(str(stratum))} ({counted(traces, 'trace')}) has no {level} "
                "verdict from the judge: "
                "its part of the slice has nothing to correct; judge it, or narrow the slice"
            )
        gold = pairs[pairs["stratum"] == stratum]
        if len(gold) < MIN_STRATUM_PAIRS:
            return (
                [],
                f"stratum {stratum_label(str(stratum))} has {counted(len(gold), 'unit')} with gold and a "
                "judge verdict "
                f"(< {MIN_STRATUM_PAIRS})",
            )
        judged = gold["judge"].to_numpy(float)
        found.append(
            ppi.StratumData(
                float(share),
                gold["gold"].to_numpy(float),
                judged,
                unlabelled if len(unlabelled) else judged,
            )
        )
    return found, None if found else "no judge verdicts in this slice"


def rogan_gladen(
    inputs: RatesInput,
    design: Design,
    values: Mapping[str, Any],
    level: str,
    raw: est.Rate,
    pairs: pd.DataFrame,
    part: pd.DataFrame,
) -> est.Rate:
    """`raw`: the judge's raw rate of the slice; `part`: the slice's frame rows."""
    method = (
        f"Rogan-Gladen on judge {inputs.judge}'s raw rate with its sensitivity and specificity "
        "on this slice's gold, each trace weighted 1/pi (N_h / labelled n_h); percentile "
        "bootstrap resampling traces within strata, labelled and not, so the raw rate's "
        f"sampling error is carried with the calibration's: {design.resamples} resamples, "
        f"seed {design.seed}"
    )
    in_slice = pairs[_mask(pairs, values)]
    if _not_by_strata(inputs, values):
        return est.Rate(None, None, None, len(in_slice), method, inputs.frame_elsewhere)
    if raw.rate is None or len(in_slice) < MIN_PAIRS:
        units = counted(len(in_slice), "unit")
        reason = f"judge not calibrated here: {units} with gold and a verdict (< {MIN_PAIRS})"
        return est.Rate(None, None, None, len(in_slice), method, reason)
    members = np.flatnonzero(_mask(design.units, values))
    cells = rg.weighted_cells(design.units, in_slice)[members]
    unfit = gaps.rogan_gladen_unfit(raw.rate, cells.sum(axis=0))
    if unfit:
        return est.Rate(None, None, None, len(in_slice), method, unfit)
    observed = rg.raw_draws(design.units, members, design.draws, part, level, design.seed)
    rate, low, high = est.rogan_gladen_interval(raw.rate, observed, cells, design.draws[:, members])
    if math.isnan(low):
        return est.Rate(rate, None, None, len(in_slice), method, "too few pairs for an interval")
    return est.Rate(rate, low, high, len(in_slice), method)


def rate_rows(
    inputs: RatesInput,
    by: Sequence[str] = (),
    levels: Sequence[str] = ("claim",),
    estimators: Sequence[str] = ESTIMATORS,
    threshold: float = DEFAULT_THRESHOLD,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    where: Mapping[str, Any] | None = None,
    overall: bool = True,
) -> list[dict[str, Any]]:
    """The `annotate rates --json` rows: per slice, level and estimator (the overall slice's
    only when `overall`)."""
    rows = []
    for level in levels:
        design = Design(inputs, level, resamples, seed)
        pairs, level_inputs = (
            with_pairs(inputs, level) if _PAIRED & {*estimators} else (None, inputs)
        )
        scope = _restrict(level_inputs.frame, where)
        scope = scope[[c for c in scope.columns if c in _READ or c in by]]  # not the others'
        parts = slice_frames(scope, by)
        for key in slice_keys(_known_rows(inputs, scope, by), by)[0 if overall else 1 :]:
            values = {**(where or {}), **key}
            part = parts.get(tuple(key.values()), scope.iloc[:0]) if key else scope
            found = _estimates(level_inputs, design, values, part, level, estimators, pairs)
            for name, rate in found.items():
                rows.append(_row(values, level, name, rate, threshold, inputs))
    return rows


def _known_rows(inputs: RatesInput, frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The rows whose `by` values are known: a source sample's undrawn rows know only strata."""
    if inputs.frame_elsewhere and not set(by) <= set(inputs.strata_columns):
        return frame[frame["trace_id"].notna()]
    return frame


def _restrict(frame: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    return frame[_mask(frame, where)] if where else frame


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def slice_frames(frame: pd.DataFrame, by: Sequence[str]) -> dict[tuple[Any, ...], pd.DataFrame]:
    """Each combination of `by` values (None for missing) -> its frame traces, in one pass."""
    if not by:
        return {}
    found = {}
    for key, part in frame.groupby(list(by), dropna=False, sort=False):
        values: tuple[Any, ...] = key if isinstance(key, tuple) else (key,)
        found[tuple(None if _missing(v) else v for v in values)] = part
    return found


def _estimates(inputs, design, values, part, level, estimators, pairs) -> dict[str, est.Rate]:  # type: ignore[no-untyped-def]
    found: dict[str, est.Rate] = {}
    raw = clustered(
        judge_raw(inputs, part, level, values), part, level, design.resamples, design.seed
    )
    for name in itertools.chain(estimators):
        if inputs.active is not None and name in active_rates.REPLACED:
            found[name] = active_rates.rate(inputs, part, level, name, MIN_TRACES)
        elif name == "weighted_human":
            found[name] = weighted_human(design, values, level, part)
        elif name == "judge_raw":
            found[name] = raw
        elif name == "judge_corrected":
            found[name] = judge_corrected(inputs, part, values, level, pairs)
        elif name == "rogan_gladen":
            found[name] = rogan_gladen(inputs, design, values, level, raw, pairs, part)
    return found


def _row(
    values, level, name, rate: est.Rate, threshold: float, inputs: RatesInput
) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    row: dict[str, Any] = {
        "slice": dict(values),
        "level": level,
        "estimator": name,
        "n": rate.n,
        "rate": _round(rate.rate),
        "low": _round(rate.low),
        "high": _round(rate.high),
        "method": rate.method,
        "state": est.threshold_state(rate.low, rate.high, threshold),
    }
    if rate.reason:
        row["reason"] = rate.reason
    if name != "weighted_human":
        row["judge"] = inputs.judge
        if inputs.rubric_versions:
            row["rubric_version"] = inputs.rubric_versions
    return row


def _round(value: float | None) -> float | None:
    """12 significant digits: a figure re-derived from the bundle compares exactly."""
    return None if value is None else float(f"{value:.12g}")
