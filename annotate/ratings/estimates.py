"""Ratings per slice as the rates are: design-weighted means (weights 1/pi of the sample) with
a BCa interval from traces resampled within strata, and the share of responses at or below a
threshold (default 2: "warning" is under 3), overall and per feature, risk category and model."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from annotate.ratings.agreement import scores_by_reviewer
from annotate.ratings.calibration import human_means, scale_or_seen
from annotate.ratings.record import criterion_scale
from annotate.stats.rates import weighted_ratio
from annotate.stats.resamples import resample_weights
from annotate.store import Store
from annotate.store import ratings as sql

SLICES = ("feature", "risk_category", "model")
DEFAULT_AT_OR_BELOW = 2  # "warning": a rating under 3


def _estimate(
    values: np.ndarray,
    weights: np.ndarray,
    draws: np.ndarray,
    members: np.ndarray,
    strata: int,
    low: float,
    span: float,
) -> dict[str, Any]:
    """The weighted mean of `values` over `members` on the scale [low, low + span]."""
    inside = np.zeros(len(values))
    inside[members] = 1.0  # weighted_ratio reads zeros for the groups outside the slice
    features = np.column_stack([weights * (values - low) / span, weights]) * inside[:, None]
    found = weighted_ratio(features, draws, members, strata)
    if found is None:
        return {"value": None, "low": None, "high": None, "units": 0}
    point, lower, upper = (low + span * x if not math.isnan(x) else None for x in found)
    return {"value": point, "low": lower, "high": upper, "units": len(members)}


def estimates_of(
    scores: Mapping[str, float],
    design: Mapping[str, tuple[Any, float]],
    slices: Mapping[str, Mapping[str, Any]],
    scale: tuple[float, float],
    at_or_below: float = DEFAULT_AT_OR_BELOW,
    seed: int = 0,
    repetitions: int = 1000,
) -> dict[str, Any]:
    """scores: trace -> its rating (the reviewers' mean, or a judge's); design: trace ->
    (stratum, weight); slices: trace -> {feature, risk_category, model}."""
    traces = sorted(scores)
    strata = [design.get(t, (None, 1.0))[0] for t in traces]
    weights = np.array([design.get(t, (None, 1.0))[1] for t in traces], dtype=float)
    values = np.array([scores[t] for t in traces], dtype=float)
    below = (values <= at_or_below).astype(float)
    draws, _, _ = resample_weights(traces, repetitions, seed, strata)
    low, high = scale
    span = max(high - low, 1e-9)

    def both(members: np.ndarray) -> dict[str, Any]:
        count = len({strata[i] for i in members})
        return {
            "mean": _estimate(values, weights, draws, members, count, low, span),
            "share_at_or_below": _estimate(below, weights, draws, members, count, 0.0, 1.0),
        }

    found: dict[str, Any] = {"overall": both(np.arange(len(traces)))}
    for name in SLICES:
        groups: dict[str, list[int]] = {}
        for i, trace in enumerate(traces):
            groups.setdefault(str(slices.get(trace, {}).get(name)), []).append(i)
        found[name] = {key: both(np.array(rows)) for key, rows in sorted(groups.items())}
    return found


def rating_estimates(
    store: Store,
    criterion: str,
    sample: str | None = None,
    judge: str | None = None,
    at_or_below: float = DEFAULT_AT_OR_BELOW,
    seed: int = 0,
    repetitions: int = 1000,
) -> dict[str, Any]:
    """`annotate rates --criterion NAME`: the reviewers' mean rating per slice (a judge's
    ratings with `judge`), design-weighted when a sample is given."""
    if judge is None:
        scores = human_means(scores_by_reviewer(sql.reviewer_ratings(store, criterion, sample)))
    else:
        scores = {t: float(s) for t, s in sql.judge_scores(store, judge, criterion, sample)}
    design = sql.sample_weights(store, sample) if sample else {}
    scale = scale_or_seen(criterion_scale(store, criterion), list(scores.values()))
    method = (
        "design-weighted mean (weights 1/pi), BCa bootstrap of traces within strata"
        if sample
        else "mean over every rated trace (no sample: unweighted), BCa bootstrap of traces"
    )
    return {
        "criterion": criterion,
        "sample": sample,
        "source": judge or "reviewers' mean",
        "scale": list(scale),
        "at_or_below": at_or_below,
        "method": method,
        **estimates_of(
            scores,
            design,
            sql.trace_slices(store, sorted(scores)),
            scale,
            at_or_below,
            seed,
            repetitions,
        ),
    }
