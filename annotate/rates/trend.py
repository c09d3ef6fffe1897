"""Trend and drift: rates per time window with trace-clustered intervals, and an alert when a
window differs from the one before beyond chance (two-sided z-test of the two estimates, each
standard error taken from its 95% interval, alert at p < 0.05). Also the error types and the
score histogram.

Every interval here resamples traces within strata (the human rate through its Design, the
judge's raw rate through rates.clustered): Wilson's over claims treated the claims of one
trace as independent; they move together, and months assigned at random "drifted" at p 0.007.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotate.rates.estimate import DEFAULT_THRESHOLD, Design, _mask, rate_rows, slice_keys
from annotate.rates.inputs import RatesInput
from annotate.stats import rates as est
from annotate.store import Store, id_batch
from annotate.store import rates as sql

DRIFT_ALPHA = 0.05
# The z-test reads a standard error from each window's 95% interval: a fair reading for a
# normal estimate, not for a handful of units (0 of 2 has the Wilson interval 0 to 0.66, and
# 0/2 against 6/11 gave p = 0.01 where Fisher's exact test gives 0.46). Windows with fewer
# units are shown, not tested.
DRIFT_MIN_N = 30
DRIFT_TEST = (
    "two-sided z-test on consecutive windows: z = (r2 - r1) / sqrt(se1^2 + se2^2), "
    "se = interval half-width / 1.96, each interval a BCa bootstrap of traces within strata "
    f"(claims of one trace move together); alert at p < 0.05; windows of {DRIFT_MIN_N} or more "
    "units"
)


def trend(
    inputs: RatesInput,
    window: str = "week",
    level: str = "response",
    estimators: Sequence[str] = ("weighted_human", "judge_raw"),
    threshold: float = DEFAULT_THRESHOLD,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    rows = rate_rows(
        inputs, [window], [level], estimators, threshold, resamples, seed, overall=False
    )
    return {
        "window": window,
        "level": level,
        "rows": rows,
        "drift": drift(rows, window),
        "test": DRIFT_TEST,
    }


def drift(rows: Sequence[dict[str, Any]], window: str) -> list[dict[str, Any]]:
    found = []
    for estimator in dict.fromkeys(r["estimator"] for r in rows):
        series = [r for r in rows if r["estimator"] == estimator and r["low"] is not None]
        series.sort(key=lambda r: str(r["slice"][window]))
        for before, after in zip(series, series[1:], strict=False):
            if min(before["n"], after["n"]) < DRIFT_MIN_N:
                found.append({"estimator": estimator, "from": before["slice"][window],
                              "to": after["slice"][window], "change": after["rate"] - before["rate"],
                              "z": None, "p": None, "alert": False,
                              "reason": f"fewer than {DRIFT_MIN_N} units in a window: not tested"})  # fmt: skip
                continue
            z, p = est.drift_test(
                (before["rate"], before["low"], before["high"]),
                (after["rate"], after["low"], after["high"]),
            )
            found.append({"estimator": estimator, "from": before["slice"][window],
                          "to": after["slice"][window], "change": after["rate"] - before["rate"],
                          "z": z, "p": p, "alert": p < DRIFT_ALPHA})  # fmt: skip
    return found


def error_types(inputs: RatesInput, by: Sequence[str] = (), seed: int = 0) -> list[dict[str, Any]]:
    """Per slice, the weighted share of each error type among claims whose gold is unsupported."""
    design = Design(inputs, "claim", 1, seed)
    weights = design.units[["trace_id", "w"]]
    claims = inputs.claims[inputs.claims["gold"] == 1].merge(weights, on="trace_id")
    claims = claims.merge(inputs.frame.drop(columns=["stratum"]), on="trace_id")
    found = []
    for key in slice_keys(inputs.frame, by):
        part = claims[_mask(claims, key)] if len(claims) else claims
        total = part["w"].sum() if len(part) else 0.0
        for kind, group in part.fillna({"error_type": "(none given)"}).groupby("error_type"):
            found.append({"slice": key, "error_type": kind, "claims": len(group),
                          "share": float(group["w"].sum() / total) if total else None})  # fmt: skip
    return found


def scores(store: Store, inputs: RatesInput) -> dict[str, Any]:
    """The judge's scores over the frame: histogram, p50, p95, standard deviation."""
    if inputs.judge is None:
        return {"count": 0, "reason": "no judge verdicts in the store"}
    if inputs.frame_scope is not None:
        found = sql.frame_judge_scores(store, *inputs.frame_scope, inputs.judge)
    else:  # drawn in place: the frame's traces in the store are the drawn ones
        drawn = inputs.frame["trace_id"].dropna()
        found = sql.judge_scores(store, id_batch(drawn), inputs.judge)
    return {"judge": inputs.judge, **est.score_summary(found)}
