"""Krippendorff's alpha at the nominal, ordinal and interval levels, missing ratings allowed.

The point value comes from the `krippendorff` package; the same alpha as per-unit sums (the
coincidence matrix) feeds the bootstrap. Ordinal and interval need numeric labels.
"""

from __future__ import annotations

import numpy as np

from annotate.stats.intervals import Measure, Stat
from annotate.stats.ratings import (
    Table,
    categories_of,
    codes,
    counts_table,
    is_numeric,
    one_category,
    scale_values,
)

LEVELS = ("nominal", "ordinal", "interval")


def _distances(n_c: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """delta^2 between categories (Krippendorff 2011, eq. for each metric); n_c: (..., q)."""
    q = len(values)
    if level == "nominal":
        return np.broadcast_to(1 - np.eye(q), (*n_c.shape[:-1], q, q))
    if level == "interval":
        return np.broadcast_to((values[:, None] - values[None, :]) ** 2, (*n_c.shape[:-1], q, q))
    cumulative = np.cumsum(n_c, axis=-1)
    before = cumulative - n_c  # sum of n_g for g < c
    low, high = np.minimum.outer(range(q), range(q)), np.maximum.outer(range(q), range(q))
    between = cumulative[..., high] - before[..., low]
    return (between - (n_c[..., low] + n_c[..., high]) / 2) ** 2


def _undefined_level(table: Table, level: str) -> str | None:
    if level not in LEVELS:
        return f"level must be one of {', '.join(LEVELS)}, got {level!r}"
    if level != "nominal" and not is_numeric(categories_of(table)):
        return f"{level} alpha needs numeric ratings (scores); these labels are categories"
    return None


def krippendorff_measure(table: Table, level: str = "nominal") -> Measure:
    """alpha = 1 - (n - 1) sum_ck o_ck d_ck / sum_ck n_c n_k d_ck over pairable values."""
    categories = categories_of(table)
    q = len(categories)
    counts = counts_table(table, categories)
    m = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(m >= 2, 1 / (m - 1), 0.0)
    coincidences = counts[:, :, None] * (counts[:, None, :] - np.eye(q)) * scale[:, None, None]
    features = coincidences.reshape(len(table), q * q)
    values = scale_values(categories)

    def value(s: np.ndarray) -> np.ndarray:
        o = s.reshape(*s.shape[:-1], q, q)
        n_c = o.sum(axis=-1)
        n = n_c.sum(axis=-1)
        d = _distances(n_c, values, level)
        expected = (n_c[..., :, None] * n_c[..., None, :] * d).sum(axis=(-1, -2))
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = 1 - (n - 1) * (o * d).sum(axis=(-1, -2)) / expected
        return np.where(expected > 0, alpha, np.nan)

    def agreement(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """alpha = (p_o - p_e) / (1 - p_e) with p_o = 1 - D_o / d_max, p_e = 1 - D_e / d_max:
        D_o the mean distance over pairable values' pairs within units, D_e over all pairs of
        pairable values, d_max the largest distance (nominal: p_o the share of agreeing
        pairs, p_e sum_c n_c (n_c - 1) / (n (n - 1))). Both in [0, 1] at every level. Also
        the exact share, sum_c o_cc / n (p_o itself at the nominal level)."""
        o = s.reshape(*s.shape[:-1], q, q)
        n_c = o.sum(axis=-1)
        n = n_c.sum(axis=-1)
        d = _distances(n_c, values, level)
        largest = d.max(axis=(-1, -2))
        with np.errstate(divide="ignore", invalid="ignore"):
            observed = 1 - (o * d).sum(axis=(-1, -2)) / (n * largest)
            pairs = (n_c[..., :, None] * n_c[..., None, :] * d).sum(axis=(-1, -2))
            expected = 1 - pairs / (n * (n - 1) * largest)
            exact = np.trace(o, axis1=-2, axis2=-1) / n
        defined = largest > 0
        return (
            np.where(defined, observed, np.nan),
            np.where(defined, expected, np.nan),
            np.where(defined, exact, np.nan),
        )

    units = int((m >= 2).sum())
    reason = _undefined_level(table, level)
    if reason is None and not units:
        reason = "no unit has two ratings"
    if reason is None and q < 2:
        reason = one_category("alpha")
    # n for the interval's Wilson floor: each pairable unit's values after its first (see
    # intervals.at_least_wilson), the pairable values less the units with 2+ values.
    comparisons = int((m - 1)[m >= 2].sum())
    return Measure(features, value, units, reason, agreement=agreement, comparisons=comparisons)


def krippendorff_alpha(
    table: Table, level: str = "nominal", measure: Measure | None = None
) -> Stat:
    """Alpha via the `krippendorff` package; missing ratings allowed. `measure`: this table's
    krippendorff_measure at this level, when the caller has it already."""
    import krippendorff

    measure = measure or krippendorff_measure(table, level)
    point = measure.point()
    if point.value is None:
        return point
    categories = categories_of(table)
    points = (
        scale_values(categories) if level != "nominal" else np.arange(len(categories), dtype=float)
    )
    cells = codes(table, categories)
    data = np.where(cells >= 0, points[cells], np.nan).T  # raters x units
    value = krippendorff.alpha(reliability_data=data, level_of_measurement=level)  # type: ignore[arg-type]
    return Stat(float(value), measure.units)
