"""Agreement between reviewers on one criterion: Krippendorff's alpha (ordinal and interval),
quadratic-weighted kappa per pair of reviewers and the ICC(2,1), each with a bootstrap interval
that resamples traces within strata and the number of units it used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from annotate.agreement.reliability import pairwise
from annotate.agreement.tables import paired_units, rating_table
from annotate.stats import coefficients as stats
from annotate.stats.ordinal import icc_measure
from annotate.store import Store
from annotate.store import evidence as evidence_sql
from annotate.store import ratings as sql

Scores = Mapping[str, Mapping[str, float]]  # reviewer -> trace -> score


def scores_by_reviewer(rows: Sequence[tuple[Any, ...]]) -> dict[str, dict[str, float]]:
    """(trace, reviewer, score) rows -> reviewer -> trace -> score."""
    found: dict[str, dict[str, float]] = {}
    for trace, reviewer, score in rows:
        found.setdefault(reviewer, {})[trace] = score
    return found


def agreement_of(
    scores: Scores, strata: Mapping[str, Any], seed: int = 0, repetitions: int = 1000
) -> dict[str, Any]:
    """The reviewers' statistics on one criterion (a trace is a unit; strata: trace -> stratum)."""
    units, reviewers, table = rating_table(scores)
    weights = stats.resample_weights(units, repetitions, seed, [strata.get(u) for u in units])
    found: dict[str, Any] = {
        "units": paired_units(table),
        "single_rated_units": len(units) - paired_units(table),
        "reviewers": reviewers,
    }
    for level in ("ordinal", "interval"):
        measure = stats.krippendorff_measure(table, level)
        point = stats.krippendorff_alpha(table, level, measure)
        stat = stats.interval(measure, [], 0, seed, weights=weights, point=point)
        found[f"krippendorff_alpha_{level}"] = stat.as_json()
    icc = stats.interval(icc_measure(table), [], 0, seed, weights=weights)
    found["icc_2_1"] = icc.as_json()
    pairs = pairwise(table, units, reviewers, strata, repetitions, seed)
    found["weighted_kappa_quadratic"] = pairs["cohen_kappa_quadratic"]
    return found


def reviewer_agreement(
    store: Store,
    criterion: str,
    sample: str | None = None,
    seed: int = 0,
    repetitions: int = 1000,
) -> dict[str, Any]:
    """`annotate agreement --criterion NAME`: the reviewers' latest ratings on the criterion."""
    scores = scores_by_reviewer(sql.reviewer_ratings(store, criterion, sample))
    strata = evidence_sql.strata(store, sample)
    return {
        "criterion": criterion,
        "sample": sample,
        **agreement_of(scores, strata, seed, repetitions),
    }
