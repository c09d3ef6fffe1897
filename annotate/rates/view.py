"""What the Rates page shows, computed from the store in one call per setting, so the page can
keep the result until the store changes (`ui.computed`): the rates of every slice with the
inputs they came from, the error types and the judge's scores; the trend per window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotate.rates.estimate import ESTIMATORS, rate_rows
from annotate.rates.inputs import load_inputs
from annotate.rates.trend import error_types, scores, trend
from annotate.store import Store


def rates_view(
    store: Store,
    sample: str,
    by: Sequence[str],
    judge: str | None,
    level: str,
    threshold: float,
) -> dict[str, Any]:
    """The inputs (one read of the store), each estimator's rate per slice at `level`, the
    error types and the judge's scores over the frame."""
    inputs = load_inputs(store, sample, list(by), judge)
    return {
        "inputs": inputs,
        "rows": rate_rows(inputs, list(by), [level], ESTIMATORS, threshold),
        "error_types": error_types(inputs, list(by)),
        "scores": scores(store, inputs),
    }


def trend_view(
    store: Store, sample: str, window: str, level: str, judge: str | None, threshold: float
) -> dict[str, Any]:
    """The rates per `window` (day, week, month) with the drift tests between windows."""
    return trend(load_inputs(store, sample, [window], judge), window, level, threshold=threshold)
