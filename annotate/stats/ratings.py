"""Rating tables: units x raters of labels (None = not rated), their categories and weights.

Pure helpers shared by the agreement coefficients and Krippendorff's alpha; no statistics.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from annotate.errors import UsageError

Label = Hashable | None
Table = Sequence[Sequence[Label]]  # one row per unit, one column per rater
WEIGHTS = ("identity", "linear", "quadratic")


def rated(row: Sequence[Label]) -> list[Hashable]:
    return [label for label in row if label is not None]


def categories_of(table: Table) -> list[Hashable]:
    """The categories used, numbers (or scores such as "4") in numeric order, else by repr."""
    found = {label for row in table for label in row}
    found.discard(None)
    if is_numeric(found):
        return sorted(found, key=number)  # type: ignore[arg-type]
    return sorted(found, key=repr)


def number(label: Hashable) -> float | None:
    """A label as a number: ints and floats, and strings that spell a finite number."""
    if isinstance(label, bool):
        return None
    if isinstance(label, int | float):
        return float(label)
    if isinstance(label, str):
        try:
            value = float(label)
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return None


def is_numeric(labels: Sequence[Hashable] | set[Hashable]) -> bool:
    """True when every label is a number or a score written as one (a rubric of "1".."5")."""
    return bool(labels) and all(number(x) is not None for x in labels)


def counts_table(table: Table, categories: Sequence[Hashable]) -> np.ndarray:
    """units x categories: how many raters gave each category to each unit."""
    q = len(categories)
    cells = codes(table, categories)
    rated_cells = cells >= 0
    units = np.broadcast_to(np.arange(len(table))[:, None], cells.shape)
    flat = units[rated_cells] * q + cells[rated_cells]
    return np.bincount(flat, minlength=len(table) * q).reshape(len(table), q).astype(float)


def codes(table: Table, categories: Sequence[Hashable]) -> np.ndarray:
    """units x raters: each label's index in `categories`, -1 where not rated."""
    index: dict[Label, int] = {c: i for i, c in enumerate(categories)}
    index[None] = -1
    lengths = set(map(len, table))
    raters = max(lengths, default=0)
    if len(lengths) <= 1:
        flat = [index[label] for row in table for label in row]
        return np.array(flat, dtype=np.int64).reshape(len(table), raters)
    found = np.full((len(table), raters), -1, dtype=np.int64)  # ragged rows: pad with "not rated"
    for u, row in enumerate(table):
        found[u, : len(row)] = [index[label] for label in row]
    return found


def weight_matrix(categories: Sequence[Hashable], kind: str = "identity") -> np.ndarray:
    """Agreement weights (1 on the diagonal), on the categories' values if they are numbers.

    Linear 1 - |k - l| / (max - min); quadratic 1 - ((k - l) / (max - min))^2 (Gwet 2014,
    ch. 3; irrCAC `Weights`). Categories that are not numbers are ranked 1..q.
    """
    if kind not in WEIGHTS:
        raise UsageError(f"weights must be one of {', '.join(WEIGHTS)}, got {kind!r}")
    q = len(categories)
    if kind == "identity" or q < 2:
        return np.eye(q)
    values = scale_values(categories)
    distance = np.abs(values[:, None] - values[None, :]) / (values.max() - values.min())
    return 1 - distance if kind == "linear" else 1 - distance**2


def one_category(name: str) -> str:
    return f"only one category was used: {name} is undefined"


def undefined_reason(units: int, categories: int, name: str, no_units: str) -> str | None:
    """Why a chance-corrected statistic is undefined on the whole table, if it is."""
    if not units:
        return no_units
    return one_category(name) if categories < 2 else None


def scale_values(categories: Sequence[Hashable]) -> np.ndarray:
    """The categories as points on a scale: their values if numbers, else ranks 1..q."""
    if is_numeric(categories):
        return np.array([number(c) for c in categories], dtype=float)
    return np.arange(1, len(categories) + 1, dtype=float)
