"""Judge-guided (active) samples: what each frame trace's probability follows, the draw and its
sequential top-ups, and the label planner's three figures (uniform human-only, uniform PPI,
active) for a target width. Statistics in annotate.stats.active; the draw in sampling.active.

A trace's expected squared error v, in order of preference: its judge score s (s(1 - s)); else
the judge's error rate on existing gold in its cell (stratum x the judge's response outcome x
score band); else disagreement between two judges (1/4 where they disagree, d/4 where they
agree, d the share disagreeing); else the mean of the others (1/4 with none: uniform). A top-up
takes the cell error rates from the gold so far first: observed errors outrank assumed ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from annotate.accounts.activity import Actor
from annotate.errors import UsageError, counted
from annotate.labelling.evidence import load_evidence
from annotate.rates.inputs import RatesInput, with_response_outcomes
from annotate.sampling.active import ACTIVE, ActiveDraw, Frame, active_frame, draw_active
from annotate.sampling.allocation import SampleError, SampleSpec
from annotate.sampling.drawn import check_name_free
from annotate.sampling.samples import _spec_from_row, known_sample
from annotate.stats import active as stats
from annotate.stats.gold import UNSUPPORTED, response_gold
from annotate.store import Store
from annotate.store import active as sql

BANDS = 3  # score bands (terciles of s(1 - s)) a top-up's error cells are cut into
PRIOR = 2.0  # pseudo-labels shrinking a cell's error rate towards its outcome's overall rate


def judge_outcome(traces: pd.DataFrame, k: int = 0) -> np.ndarray:
    """Judge k's response outcome per trace (1, 0, NaN), by the rates' one rule."""
    frame = pd.DataFrame({"jresp": traces[f"jresp{k}"], "jcu": traces[f"jcu{k}"],
                          "jcn": traces[f"jcn{k}"], "nclaims": traces["nclaims"], "traces": 1})  # fmt: skip
    return with_response_outcomes(frame)["jr"].to_numpy(float)


def store_gold(store: Store) -> pd.Series:
    """trace -> response gold (1 unsupported / 0) over every sample's labels."""
    found = response_gold(load_evidence(store, None))
    return pd.Series({t: float(o == UNSUPPORTED) for t, o in found.items()}, dtype=float)


def _bands(score: np.ndarray) -> np.ndarray:
    """A score band per trace: terciles of s(1 - s) among the scored, -1 unscored."""
    band = np.full(len(score), -1)
    scored = ~np.isnan(score)
    if scored.sum() >= BANDS:
        edges = np.quantile(score[scored], np.linspace(0, 1, BANDS + 1)[1:-1])
        band[scored] = np.searchsorted(edges, score[scored], side="right")
    return band


def cell_error_rates(
    errors: pd.DataFrame, table: pd.DataFrame, cell: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """For each row of `table`: its cell's error rate on `errors` (rows with `error` 0/1) and
    how many labels it rests on. A cell is `cell` x whether the judge gave an outcome x the
    outcome; its rate is shrunk by PRIOR pseudo-labels towards the outcome's overall rate,
    itself (errors + 1) / (labels + 2). One rule for the top-ups' probabilities and the
    planner's figures."""
    kinds = ["judged", "f"]
    pooled = errors.groupby(kinds)["error"].agg(["sum", "count"])
    pooled = ((pooled["sum"] + 1) / (pooled["count"] + 2)).rename("pooled").reset_index()
    cells = errors.groupby([*cell, *kinds])["error"].agg(["sum", "count"]).reset_index()
    found = table.merge(pooled, on=kinds, how="left").merge(cells, on=[*cell, *kinds], how="left")
    found = found.fillna({"sum": 0.0, "count": 0.0, "pooled": 0.5})
    rates = (found["sum"] + PRIOR * found["pooled"]) / (found["count"] + PRIOR)
    return rates.to_numpy(float), found["count"].to_numpy(float)


def _cells(key: pd.Series, outcome: np.ndarray, **extra: Any) -> pd.DataFrame:
    """Rows of (key, judged, f, extra...): a trace's stratum and its judge outcome."""
    judged = ~np.isnan(outcome)
    return pd.DataFrame({"key": key.astype(str).to_numpy(), "judged": judged,
                         "f": np.nan_to_num(outcome, nan=0.0), **extra})  # fmt: skip


def gold_error_variance(traces: pd.DataFrame, outcome: np.ndarray, gold: pd.Series) -> np.ndarray:
    """Each trace's cell error rate on gold, cells stratum x outcome x score band (NaN where
    its cell has no gold); the judge's error is |gold - outcome|, no outcome counting as 0."""
    y = traces["trace_id"].map(gold).to_numpy(float)
    table = _cells(traces["key"], outcome, band=_bands(traces["score0"].to_numpy(float)))
    errors = table.assign(error=np.abs(y - table["f"].to_numpy()))
    rates, counts = cell_error_rates(errors.dropna(subset=["error"]), table, ["key", "band"])
    return np.where(counts > 0, rates, np.nan)


def disagreement_variance(traces: pd.DataFrame) -> np.ndarray:
    """1/4 where judges 0 and 1 disagree, d/4 where they agree (d: the share that disagree),
    NaN where either gave no outcome."""
    first, second = judge_outcome(traces, 0), judge_outcome(traces, 1)
    both = ~np.isnan(first) & ~np.isnan(second)
    differ = both & (first != second)
    share = differ.sum() / both.sum() if both.any() else 0.0
    return np.where(both, np.where(differ, 0.25, share / 4), np.nan)


def expected_errors(
    traces: pd.DataFrame, gold: pd.Series, gold_first: bool = False
) -> tuple[np.ndarray, str]:
    """v per trace and the basis, e.g. 'score 900, gold 80, disagreement 0, none 20'."""
    outcome = judge_outcome(traces)
    sources = {
        "score": stats.error_variance(traces["score0"].to_numpy(float)),
        "gold": gold_error_variance(traces, outcome, gold) if len(gold) else np.full(len(traces), np.nan),
        "disagreement": disagreement_variance(traces) if "jresp1" in traces else np.full(len(traces), np.nan),
    }  # fmt: skip
    sources["score"] = np.where(traces["score0"].isna(), np.nan, sources["score"])
    order = ["gold", "score", "disagreement"] if gold_first else ["score", "gold", "disagreement"]
    v, counts = np.full(len(traces), np.nan), {}
    for name in order:
        take = np.isnan(v) & ~np.isnan(sources[name])
        v[take], counts[name] = sources[name][take], int(take.sum())
    counts["none"] = int(np.isnan(v).sum())
    v = np.where(np.isnan(v), np.nanmean(v) if counts["none"] < len(v) else 0.25, v)
    return v, ", ".join(f"{k} {n}" for k, n in counts.items())


def _check_scores(traces: pd.DataFrame, judges: Sequence[str]) -> None:
    bad = int(traces["bad_score0"].sum())
    if bad:
        raise SampleError(
            f"judge {judges[0]!r} has {counted(bad, 'score')} outside [0, 1] on the frame: an "
            "active draw reads a score as the judge's probability; rescale them on import, or "
            "use another judge"
        )


def draw_active_sample(
    store: Store,
    spec: SampleSpec,
    judges: Sequence[str],
    budget: float | None = None,
    created_by: Actor | str | None = None,
    plan_only: bool = False,
) -> ActiveDraw:
    """A new active sample of `budget` expected labels (default spec.n) following judges[0]
    (judges[1], if given, for disagreement)."""
    budget = float(budget if budget is not None else spec.n or 0)
    check_name_free(store, spec.name)
    _check_judges(store, judges)
    frame = active_frame(store, spec, judges)
    _check_scores(frame.traces, judges)
    v, basis = expected_errors(frame.traces, store_gold(store))
    return _draw(store, spec, frame, v, (budget, basis, judges[0]), created_by, plan_only)


def is_active(store: Store, name: str) -> bool:
    """Whether sample `name` (which must exist) was drawn with --allocation active."""
    return known_sample(store, name)["allocation"] == ACTIVE


def top_up_active(
    store: Store,
    name: str,
    extra: float,
    created_by: Actor | str | None = None,
    plan_only: bool = False,
) -> ActiveDraw:
    """Draw about `extra` more labels into active sample `name`, probabilities recomputed from
    the gold so far (the judge's observed errors per stratum and score band)."""
    row = known_sample(store, name)
    draws = sql.draws(store, name)
    if row["allocation"] != ACTIVE or not draws:
        raise SampleError(
            f"{name!r} was not drawn with --allocation active; top it up without --judge"
        )
    judge = draws[-1]["judge"]
    spec = _spec_from_row(row)
    frame = active_frame(store, spec, [judge], row["max_import_id"])
    v, basis = expected_errors(frame.traces, store_gold(store), gold_first=True)
    return _draw(store, spec, frame, v, (float(extra), basis, judge), created_by, plan_only)


def _draw(
    store: Store,
    spec: SampleSpec,
    frame: Frame,
    v: np.ndarray,
    what: tuple[float, str, str],
    created_by: Actor | str | None,
    plan_only: bool,
) -> ActiveDraw:
    budget, basis, judge = what
    taken = set(sql.unit_draws(store, spec.name)["trace_id"])
    eligible = ~frame.traces["trace_id"].isin(taken).to_numpy()
    floor = stats.choose_floor(v[eligible]) if eligible.any() else 1.0
    spec = replace(spec, allocation=ACTIVE)
    return draw_active(store, spec, frame, v, (budget, floor, basis, judge), created_by, plan_only)


def _check_judges(store: Store, judges: Sequence[str]) -> None:
    known = [name for name, _ in store.fetchall(
        "SELECT judge, count(*) FROM judge_verdicts GROUP BY judge ORDER BY judge")]  # fmt: skip
    if not judges or None in judges or len(judges) > 2:
        raise SampleError("--allocation active follows a judge: give --judge NAME (or NAME,OTHER)")
    for judge in judges:
        if judge not in known:
            raise SampleError(
                f"no verdicts from judge {judge!r}; judges in the store: {', '.join(known) or 'none'}"
            )


def label_savings(inputs: RatesInput, width: float) -> dict[str, Any]:
    """For a target total width of the response rate's 95% interval: the labels a uniform
    human-only sample, a uniform PPI sample and an active sample need, from the current gold
    (cells: stratum x the judge's response outcome, error rates shrunk as for a top-up)."""
    if not 0 < width < 1:
        raise UsageError(f"--width is a share between 0 and 1 (0.04 = four points), got {width}")
    frame = inputs.frame
    # A frame row stands for `traces` traces of one stratum and judge outcome, so one cell:
    # the variances are taken per row, each standing for its row's traces (300,000 strings,
    # then 300,000 repeated variances, were not).
    rows = frame[frame["traces"] > 0]
    counts = rows["traces"].to_numpy(np.int64)
    stratum = rows["stratum"].astype(str).to_numpy()
    gold = inputs.responses.merge(inputs.units[["trace_id", "stratum"]], on="trace_id")
    pairs = gold.merge(frame[["trace_id", "jr"]], on="trace_id", how="left")
    v_judge = _cell_rates(stratum, rows["jr"].to_numpy(float), pairs)
    v_human = _human_variance(stratum, gold)
    floor = stats.choose_floor(v_judge, counts)
    uniform = np.full(len(counts), 1.0 / int(counts.sum()))
    active = stats.design_shares(v_judge, floor, counts)
    found = {
        "uniform_human": stats.labels_for_width(v_human, uniform, width, counts),
        "uniform_ppi": stats.labels_for_width(v_judge, uniform, width, counts),
        "active": stats.labels_for_width(v_judge, active, width, counts),
    }
    return {
        **found,
        "floor_weight": floor,
        "labelled": len(gold),
        "method": (
            f"n = sum(v / a) / (N^2 (width / 3.92)^2 + sum v) for draw shares a (uniform 1/N; "
            f"active: {stats.METHOD}, sqrt(v) mixed with the floor {floor:g}); v: the judge's "
            "error rate on gold per stratum and response outcome (AIPW), or p(1 - p) + the "
            "stratum's offset from the overall rate (human only)"
        ),
    }


def describe_savings(needed: dict[str, Any], width: float) -> str:
    """label_savings' three figures for the width, in one line (CLI and Rates page)."""
    return (
        f"labels for a {width:g} wide interval, in all: {needed['uniform_human']} uniform "
        f"human-only, {needed['uniform_ppi']} uniform PPI, {needed['active']} active "
        f"(--allocation active; floor weight {needed['floor_weight']:g})"
    )


def _cell_rates(stratum: np.ndarray, outcome: np.ndarray, pairs: pd.DataFrame) -> np.ndarray:
    """Each frame trace's cell error rate (stratum x outcome) on the gold pairs."""
    errors = _cells(pairs["stratum"], pairs["jr"].to_numpy(float))
    errors = errors.assign(error=np.abs(pairs["gold"].to_numpy(float) - errors["f"].to_numpy()))
    return cell_error_rates(errors, _cells(pd.Series(stratum), outcome), ["key"])[0]


def _human_variance(stratum: np.ndarray, gold: pd.DataFrame) -> np.ndarray:
    """(y - R)^2 expected per trace: p_h(1 - p_h) + (p_h - p)^2, p_h smoothed (+1 / +2)."""
    per = gold.groupby(gold["stratum"].astype(str))["gold"].agg(["sum", "count"])
    rates = (per["sum"] + 1) / (per["count"] + 2)
    overall = (gold["gold"].sum() + 1) / (len(gold) + 2)
    p = pd.Series(stratum).map(rates).fillna(overall).to_numpy(float)
    return p * (1 - p) + (p - overall) ** 2
