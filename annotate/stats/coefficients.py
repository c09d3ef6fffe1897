"""Inter-rater statistics on a units x raters table of labels (None = not rated).

Pure functions: no store, no streamlit. An undefined statistic (one category only, too few
units) is Stat(value=None, reason=...), never a crash or a number. One definition each, as
in Gwet (2014) and irrCAC: agreement over units with 2+ ratings, category shares over every
rated unit. Every statistic is a function of per-unit sums (see `intervals`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from annotate.stats.alpha import krippendorff_alpha, krippendorff_measure
from annotate.stats.intervals import (
    Z95,
    Measure,
    Stat,
    interval,
    proportion,
    ratio,
    wilson_interval,
)
from annotate.stats.ratings import (
    WEIGHTS,
    Label,
    Table,
    categories_of,
    codes,
    counts_table,
    one_category,
    undefined_reason,
    weight_matrix,
)
from annotate.stats.resamples import Weights, draw_ahead, resample_weights, shared_resamples

__all__ = [
    "WEIGHTS", "Z95", "Label", "Measure", "Stat", "Table", "draw_ahead", "interval",
    "krippendorff_alpha",
    "krippendorff_measure", "one_category", "proportion", "ratio", "resample_weights",
    "shared_resamples",
    "wilson_interval", "Weights",
]  # fmt: skip


def _chance_corrected(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected < 1 - 1e-12, (observed - expected) / (1 - expected), np.nan)


def _unit_features(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per unit [has 2+ ratings, its weighted pair agreement, is rated, its category shares]."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    weighted = counts @ weights.T
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = np.where(pairable, (counts * (weighted - 1)).sum(axis=1) / (m * (m - 1)), 0.0)
        shares = np.where(m[:, None] > 0, counts / np.where(m > 0, m, 1)[:, None], 0.0)
    return np.column_stack([pairable, agree, m > 0, shares]).astype(float)


def _exact(counts: np.ndarray, weights: str) -> np.ndarray:
    """Per unit its exact (unweighted) pair agreement, as a column when weights give part
    credit (the interval's Wilson floor goes on it; see intervals.at_least_wilson), else none."""
    if weights == "identity":
        return np.zeros((len(counts), 0))
    return _unit_features(counts, np.eye(counts.shape[1]))[:, 1:2]


def _comparisons(counts: np.ndarray) -> int:
    """Each pairable unit's ratings after its first, summed: n for the Wilson floor of the
    interval (see intervals.at_least_wilson); the units when every unit has two ratings."""
    m = counts.sum(axis=1)
    return int((m - 1)[m >= 2].sum())


def _units_note(features: np.ndarray) -> str:
    paired, rated = int(features[:, 0].sum()), int(features[:, 2].sum())
    return (
        f"agreement over {paired} units with 2+ ratings; category shares over {rated} rated "
        f"units ({rated - paired} with one rating)"
    )


CHANCE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    # pi: (..., q) category shares; w: q x q agreement weights -> chance agreement (...)
    "fleiss": lambda pi, w: np.einsum("...k,kl,...l->...", pi, w, pi),
    "gwet": lambda pi, w: w.sum() / (w.shape[0] * (w.shape[0] - 1)) * (pi * (1 - pi)).sum(-1),
    "brennan_prediger": lambda pi, w: np.full(pi.shape[:-1], w.sum() / w.shape[0] ** 2),
}


def family_measure(
    table: Table, chance: str, weights: str = "identity", scale: Sequence[Hashable] | None = None
) -> Measure:
    """Fleiss' kappa, Gwet's AC1/AC2 or Brennan-Prediger, for many raters and missing ratings.

    pa = mean over units with r_i >= 2 of sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)), with
    r*_ik = sum_l w_kl r_il; pi_k = mean over rated units of r_ik / r_i. Chance agreement:
    Fleiss (generalised, Gwet 2014 eq. 2.26) sum_kl w_kl pi_k pi_l; Gwet T_w / (q (q - 1))
    sum_k pi_k (1 - pi_k); Brennan-Prediger T_w / q^2. Coefficient (pa - pe) / (1 - pe).

    q and the weights are the scale's (`scale`: the rubric's categories, as Gwet 2014 and
    statsmodels' Randolph kappa count them); without one, the categories used (a variant
    whose method says so). Fleiss' and Conger's kappa do not depend on unused categories.
    """
    categories = on_scale(table, scale)
    w = weight_matrix(categories, weights)
    counts = counts_table(table, categories)
    exact = _exact(counts, weights)
    features = np.column_stack([_unit_features(counts, w), exact])
    expected, q = CHANCE[chance], len(categories)

    def agreement(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with np.errstate(divide="ignore", invalid="ignore"):
            pi = s[..., 3 : 3 + q] / s[..., 2:3]
        observed = ratio(s[..., 1], s[..., 0])
        return observed, expected(pi, w), ratio(s[..., -1], s[..., 0]) if exact.size else observed

    def value(s: np.ndarray) -> np.ndarray:
        return _chance_corrected(*agreement(s)[:2])

    # No floor: with missing ratings, units rated once move chance agreement towards 1, so the
    # coefficient has no least value (about -100 on one disagreeing pair among 100 single ratings).
    units = int(features[:, 0].sum())
    name = {"fleiss": "kappa", "gwet": "AC1", "brennan_prediger": "Brennan-Prediger"}[chance]
    reason = undefined_reason(units, len(categories_of(table)), name, "no unit has two ratings")
    note = _units_note(features)
    floor = -math.inf
    if chance != "fleiss":  # their chance agreement is at most T_w / q^2 (pa >= 0 gives the least)
        note += "; " + _scale_note(categories, scale)
        most = w.sum() / q**2 if q else 1.0
        floor = -most / (1 - most) if most < 1 else -math.inf
    return Measure(
        features, value, units, reason, note, floor, agreement, comparisons=_comparisons(counts)
    )


def on_scale(table: Table, scale: Sequence[Hashable] | None) -> list[Hashable]:
    """The scale's categories in its order, then any label used outside it; without a scale,
    the categories used."""
    used = categories_of(table)
    if scale is None:
        return used
    return [*scale, *(c for c in used if c not in set(scale))]


def _scale_note(categories: Sequence[Hashable], scale: Sequence[Hashable] | None) -> str:
    named = ", ".join(map(str, categories))
    if scale is None:
        return f"chance over the {len(categories)} categories used ({named}), not a scale's"
    return f"chance over the scale's {len(categories)} categories ({named})"


def percent_agreement_measure(table: Table, weights: str = "identity") -> Measure:
    categories = categories_of(table)
    counts = counts_table(table, categories)
    exact = _exact(counts, weights)
    features = _unit_features(counts, weight_matrix(categories, weights))[:, :2]
    units = int(features[:, 0].sum())
    reason = None if units else "no unit has two ratings"

    def agreement(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        observed = ratio(s[..., 1], s[..., 0])  # no chance correction: p_e = 0
        return observed, np.zeros_like(observed), ratio(s[..., -1], s[..., 0])

    value = lambda s: ratio(s[..., 1], s[..., 0])  # noqa: E731
    n = _comparisons(counts)
    features = np.column_stack([features, exact if exact.size else features[:, 1]])
    return Measure(features, value, units, reason, None, 0.0, agreement, n)


def fleiss_measure(table: Table, weights: str = "identity") -> Measure:
    return family_measure(table, "fleiss", weights)


def gwet_measure(
    table: Table, weights: str = "identity", scale: Sequence[Hashable] | None = None
) -> Measure:
    return family_measure(table, "gwet", weights, scale)


def brennan_prediger_measure(
    table: Table, weights: str = "identity", scale: Sequence[Hashable] | None = None
) -> Measure:
    """Brennan-Prediger (1981), Randolph's free-marginal kappa for many raters: chance 1/q."""
    return family_measure(table, "brennan_prediger", weights, scale)


def conger_measure(table: Table, weights: str = "identity") -> Measure:
    """Conger's (1980) kappa, Cohen's for many raters, with missing ratings (Gwet 2014, 2.3).

    pa as for Fleiss; p_gk = share of rater g's ratings in category k; chance agreement
    sum_kl w_kl (pbar_k pbar_l - s_kl / r), s_kl the covariance of p_gk and p_gl over raters.
    """
    categories = categories_of(table)
    q, raters = len(categories), len(table[0]) if table else 0
    w = weight_matrix(categories, weights)
    counts = counts_table(table, categories)
    base = _unit_features(counts, w)[:, :2]
    cells = codes(table, categories)
    per_rater = np.zeros((len(table), raters * q))
    for g in range(min(raters, cells.shape[1])):
        rated = np.flatnonzero(cells[:, g] >= 0)
        per_rater[rated, g * q + cells[rated, g]] = 1

    exact = _exact(counts, weights)

    def agreement(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        classified = s[..., 2 : 2 + raters * q].reshape(*s.shape[:-1], raters, q)
        rated = classified.sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = classified / rated[..., None]
        p_mean = p.mean(axis=-2)
        centred = p - p_mean[..., None, :]
        s2 = np.einsum("...gk,...gl->...kl", centred, centred) / (raters - 1)
        outer = p_mean[..., :, None] * p_mean[..., None, :]
        expected = (w * (outer - s2 / raters)).sum(axis=(-1, -2))
        observed = ratio(s[..., 1], s[..., 0])
        return observed, expected, ratio(s[..., -1], s[..., 0]) if exact.size else observed

    def value(s: np.ndarray) -> np.ndarray:
        return _chance_corrected(*agreement(s)[:2])

    units = int(base[:, 0].sum())
    reason = undefined_reason(units, q, "Conger's kappa", "no unit has two ratings")
    if raters < 2:
        reason = "needs two or more raters"
    features = np.column_stack([base, per_rater, exact])
    note = _units_note(np.column_stack([base, base]))
    return Measure(
        features, value, units, reason, note, agreement=agreement, comparisons=_comparisons(counts)
    )


def pair_measure(
    a: Sequence[Label], b: Sequence[Label], chance: str = "cohen", weights: str = "identity"
) -> Measure:
    """Cohen's kappa (weighted: Cohen 1968) or Scott's pi for two raters on their shared units.

    Cohen's is undefined, not 0, when one rater used a single category: it is then 0
    whatever the other rater does (scikit-learn reports that 0), which says nothing.
    """
    shared = [
        u for u, (x, y) in enumerate(zip(a, b, strict=True)) if x is not None and y is not None
    ]
    both = [(a[u], b[u]) for u in shared]
    categories = categories_of(both)
    q = len(categories)
    w = weight_matrix(categories, weights)
    cells = codes(both, categories).reshape(len(both), 2)
    features = np.zeros((len(a), q * q))
    features[shared, cells[:, 0] * q + cells[:, 1]] = 1

    def parts(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Observed, chance and exact agreement, and whether each rater used two categories."""
        joint = s.reshape(*s.shape[:-1], q, q)
        with np.errstate(divide="ignore", invalid="ignore"):
            joint = joint / joint.sum(axis=(-1, -2))[..., None, None]
        rows, columns = joint.sum(axis=-1), joint.sum(axis=-2)
        spread = ((rows > 0).sum(axis=-1) > 1) & ((columns > 0).sum(axis=-1) > 1)
        if chance == "scott":
            rows = columns = (rows + columns) / 2
        expected = (w * rows[..., :, None] * columns[..., None, :]).sum(axis=(-1, -2))
        exact = np.trace(joint, axis1=-2, axis2=-1)
        return (w * joint).sum(axis=(-1, -2)), expected, exact, spread

    def value(s: np.ndarray) -> np.ndarray:
        observed, expected, _, spread = parts(s)
        kappa = _chance_corrected(observed, expected)
        return np.where(spread | (chance == "scott"), kappa, np.nan)

    units = len(both)
    name = "Scott's pi" if chance == "scott" else "kappa"
    reason = undefined_reason(units, q, name, "the two raters share no units")
    constant = min(len({x for x, _ in both}), len({y for _, y in both})) < 2
    if reason is None and chance == "cohen" and constant:
        reason = f"one rater used one category only: {name} is undefined"
    agreement = lambda s: parts(s)[:3]  # noqa: E731
    # Cohen's and Scott's coefficients lie in [-1, 1]: the interval too (Scott's pi reached
    # -1.01 on 6 units, widened for few traces)
    return Measure(features, value, units, reason, None, -1.0, agreement, comparisons=units)


def cohen_measure(a: Sequence[Label], b: Sequence[Label], weights: str = "identity") -> Measure:
    return pair_measure(a, b, "cohen", weights)


def scott_measure(a: Sequence[Label], b: Sequence[Label]) -> Measure:
    return pair_measure(a, b, "scott")


def percent_agreement(table: Table) -> Stat:
    """Share of agreeing rater pairs within units, averaged over units with 2+ ratings."""
    return percent_agreement_measure(table).point()


def fleiss_kappa(table: Table, weights: str = "identity") -> Stat:
    """Fleiss' kappa generalised to missing ratings (Gwet 2014; irrCAC `fleiss`)."""
    return fleiss_measure(table, weights).point()


def gwet_ac1(table: Table, scale: Sequence[Hashable] | None = None) -> Stat:
    return gwet_measure(table, scale=scale).point()


def gwet_ac2(
    table: Table, weights: str = "quadratic", scale: Sequence[Hashable] | None = None
) -> Stat:
    return gwet_measure(table, weights, scale).point()


def brennan_prediger(
    table: Table, weights: str = "identity", scale: Sequence[Hashable] | None = None
) -> Stat:
    return brennan_prediger_measure(table, weights, scale).point()


def conger_kappa(table: Table, weights: str = "identity") -> Stat:
    return conger_measure(table, weights).point()


def cohen_kappa(a: Sequence[Label], b: Sequence[Label], weights: str = "identity") -> Stat:
    return cohen_measure(a, b, weights).point()


def scott_pi(a: Sequence[Label], b: Sequence[Label]) -> Stat:
    return scott_measure(a, b).point()


MEASURES: dict[Callable[..., Stat], Callable[[Table], Measure]] = {
    percent_agreement: percent_agreement_measure,
    fleiss_kappa: fleiss_measure,
    gwet_ac1: gwet_measure,
    brennan_prediger: brennan_prediger_measure,
    conger_kappa: conger_measure,
    krippendorff_alpha: krippendorff_measure,
}


def bootstrap(
    statistic: Callable[[Table], Stat],
    table: Table,
    groups: Sequence[Hashable],
    repetitions: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Stat:
    """Seeded BCa bootstrap of one of this module's statistics over groups of units."""
    measure = MEASURES[statistic](table)
    return interval(measure, groups, repetitions, seed, level, point=statistic(table))
