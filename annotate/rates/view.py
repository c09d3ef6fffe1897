"""What the Rates page shows, computed from the store in one call per setting, so the page can
keep the result until the store changes (`ui.computed`): the rates of every slice with the
inputs they came from and the error types; the judge's scores; the trend per window; the
label budget for a target width.

Both read the same inputs (the rates' frame carries every window column), read once per
change of the store: a first visit reads the store once, not once per section.

Python's cyclic collector is paused while a view is computed, as for agreement and calibration
(annotate.ingest.collector: counted across threads): a view makes tens of thousands of small
objects (votes, rows) that hold no reference cycles, and the collector walked the whole process
again and again while they were made (0.05-0.12 s of a 0.5-1 s view at 300,000 traces). What a
view keeps is walked once, whenever the collector next runs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from annotate.ingest.collector import collector_paused
from annotate.rates.budget import plan_labels
from annotate.rates.estimate import ESTIMATORS, RESAMPLES, SEED, rate_rows
from annotate.rates.inputs import RatesInput, load_inputs
from annotate.rates.trend import error_types, scores, trend
from annotate.store import Store
from annotate.store.status import change_mark

_LAST: dict[tuple[Any, ...], RatesInput] = {}  # the newest read, shared (never changed)
_LOCK = threading.Lock()


def shared_inputs(
    store: Store, sample: str, by: Sequence[str], judge: str | None, level: str | None = None
) -> RatesInput:
    """load_inputs, kept for the next call with the same settings until the store changes; read
    with `level`'s bootstrap draws made beside the frame's read (the rates' own settings)."""
    key = (store.path, change_mark(store), sample, tuple(by), judge)
    with _LOCK:
        if key in _LAST:
            return _LAST[key]
    draws = (level, RESAMPLES, SEED) if level else None
    inputs = load_inputs(store, sample, list(by), judge, draws)
    with _LOCK:
        _LAST.clear()
        _LAST[key] = inputs
    return inputs


@collector_paused()
def rates_view(
    store: Store,
    sample: str,
    by: Sequence[str],
    judge: str | None,
    level: str,
    threshold: float,
) -> dict[str, Any]:
    """The inputs, each estimator's rate per slice at `level` and the error types."""
    inputs = shared_inputs(store, sample, by, judge, level)
    return {
        "inputs": inputs,
        "rows": rate_rows(inputs, list(by), [level], ESTIMATORS, threshold),
        "error_types": error_types(inputs, list(by)),
    }


def scores_view(store: Store, sample: str, by: Sequence[str], judge: str | None) -> dict[str, Any]:
    """The judge's scores over the frame (annotate.rates.trend.scores), from the inputs
    `rates_view` read for the same sample, slices and judge: a query over the frame's verdicts
    that only the page's tab of scores needs."""
    return scores(store, shared_inputs(store, sample, by, judge))


@collector_paused()
def trend_view(
    store: Store,
    sample: str,
    by: Sequence[str],
    judge: str | None,
    window: str,
    level: str,
    threshold: float,
) -> dict[str, Any]:
    """The rates per `window` (day, week, month) with the drift tests between windows, from
    the inputs `rates_view` read for the same sample, slices and judge."""
    inputs = shared_inputs(store, sample, by, judge)
    return trend(inputs, window, level, threshold=threshold)


@collector_paused()
def budget_view(
    store: Store, sample: str, by: Sequence[str], judge: str | None, width: float
) -> dict[str, Any]:
    """The label budget (`plan_labels`) for `width`, from the inputs `rates_view` read for the
    same sample, slices and judge: the page keeps it until the store changes, so a revisit does
    not plan again (planning was most of a revisit's CPU)."""
    return plan_labels(shared_inputs(store, sample, by, judge), width)
