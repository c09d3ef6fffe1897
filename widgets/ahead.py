"""The lead pages' default views, computed ahead of the visit (issue 38: a first visit to
Agreement, Calibration or Rates under 1 s on a 300,000-trace store).

What the three pages compute on a visit with their widgets as they open (every sample, the
first judge, the default level and slices) is a few seconds of statistics with bootstrap
intervals. When a lead or an auditor opens Home or one of those pages, a worker thread computes
the others' default views into the pages' own cache (`ui.computed`, keyed by the store's change
mark), so the page finds them there; a page that asks while the worker is still on it waits for
that one computation rather than starting a second.

It runs only for a lead's or auditor's visit (a reviewer's never starts it), at most once per
change of the store and one at a time, on its own cursor, and stops as soon as the store changes
under it (its results would be for numbers nobody can see). It runs at the pages' priority: a
lead who clicks on at once waits for it (a lower one made that wait longer: a thread holding
Python's lock was scheduled less, and the page waited on it), and it is the same work the pages
would do on the visits it serves. The defaults live here and the pages read them: a test opens
each page after the worker and checks it computed none of the statistics again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

import ui
from annotate.store import Store
from annotate.store.status import change_mark

# The pages' widgets as they open (each page's first option or default reads these).
LEVELS = {"agreement": ["claim", "response"], "calibration": ["claim", "response"]}
RATES_LEVELS = ["response", "claim"]
SCALES = ["binary", "full"]
SLICES = ["feature"]  # Calibration's and Rates' "Slice by" default
WINDOWS = ["week", "day", "month"]  # Rates' trend window
BUDGET_WIDTH = 0.10  # Rates' target interval width for the label budget

log = logging.getLogger(__name__)
_GUARD = threading.Lock()
_STATE: dict[str, Any] = {"last": None, "running": False, "started": 0}  # started: a count


def calibration_level(judged_at: list[str]) -> str:
    """The level Calibration opens at: the first the judge gave verdicts at."""
    levels = LEVELS["calibration"]
    return judged_at[0] if judged_at and judged_at[0] in levels else levels[0]


def level_index(judged_at: list[str]) -> int:
    """calibration_level's place among Calibration's levels (its Level box's index)."""
    return LEVELS["calibration"].index(calibration_level(judged_at))


# The statistics modules are imported by the worker, not by the page that starts it.


def _agreement(ask: Callable[..., Any], store: Store) -> None:
    from annotate.agreement.reliability import agreement
    from annotate.report import charts

    result = ask(agreement, None, LEVELS["agreement"][0], SCALES[0])
    ui.chart_spec(charts.over_time_chart, result["over_time"])


def _calibration(ask: Callable[..., Any], store: Store) -> None:
    from annotate.agreement.calibration import calibration, load_thresholds
    from annotate.judge.labels import mapping_rows
    from annotate.labelling.session import claim_view
    from annotate.report import charts
    from annotate.store.assignments import judge_levels, judge_names

    judges = ask(judge_names)
    if not judges:
        return
    level = calibration_level(ask(judge_levels, judges[0]))
    report = ask(calibration, judges[0], None, level, SLICES, thresholds=load_thresholds(store))
    ask(mapping_rows, judges[0])
    if not report["n"]:
        return
    ui.chart_spec(charts.confusion_chart, report["confusion"])
    if report["slices"]:
        ui.chart_spec(charts.slice_chart, report["slices"])
    claims = [d for d in report["disagreements"] if d["claim_index"] is not None]
    if claims:  # the disagreement the page opens first
        ask(claim_view, claims[0]["trace_id"], claims[0]["claim_index"])


def _rates_opening(store: Store) -> tuple[str, str, tuple[str, ...], str | None] | None:
    """The sample, level, slices and judge Rates opens with (None: no sample yet)."""
    from annotate.judge.default import choose_judge
    from annotate.sampling.samples import list_samples

    samples = list_samples(store)
    if not samples:
        return None
    sample = samples[0]["name"]
    judges = choose_judge(store, sample).judges
    return sample, RATES_LEVELS[0], tuple(SLICES), judges[0] if judges else None


def _rates(ask: Callable[..., Any], store: Store) -> None:
    from annotate.rates import charts
    from annotate.rates.gate import load_threshold
    from annotate.rates.view import budget_view, rates_view, scores_view, trend_view

    opening = _rates_opening(store)
    if opening is None:
        return
    sample, level, by, judge = opening
    threshold = load_threshold(store)
    view = ask(rates_view, sample, by, judge, level, threshold)
    ui.chart_spec(charts.rates_chart, view["rows"], threshold)
    trend = ask(trend_view, sample, by, view["inputs"].judge, WINDOWS[0], level, threshold)
    ui.chart_spec(charts.trend_chart, trend["rows"], WINDOWS[0])
    found = ask(scores_view, view["inputs"].sample, by, judge)
    if found.get("count"):
        ui.chart_spec(charts.score_chart, found)
    ask(budget_view, view["inputs"].sample, by, judge, float(BUDGET_WIDTH))


PAGES = {"agreement": _agreement, "calibration": _calibration, "rates": _rates}


class _Moved(Exception):
    """The store changed under the worker: what is left would be for an old change mark."""


def compute_ahead(process_store: Store, skip: str | None = None) -> list[str]:
    """Every lead page's default view but `skip`'s (the page being drawn computes its own),
    through the pages' cache, on a cursor of its own. Returns the pages done; stops at the
    first change of the store."""
    cursor = process_store.session()
    mark = change_mark(cursor)
    done = []

    def ask(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if change_mark(cursor) != mark:
            raise _Moved
        key = ui.RESULTS.key(str(cursor.path), mark, function, args, kwargs)
        return ui.RESULTS.get_or_compute(key, lambda: function(cursor, *args, **kwargs))

    # Rates' frame is read beside the other views, from the start when a lead page started
    # the worker (its own view is drawn), else once the first view is done: from Home, that is
    # the page a lead clicking through opens next, and the read's DuckDB threads beside it
    # doubled its wait (0.8 -> 1.6 s at 300,000 traces).
    frame: threading.Thread | None = None
    try:
        for page, compute in PAGES.items():
            if frame is None and skip != "rates" and (skip is not None or done):
                frame = _read_rates_frame_ahead(process_store)
            if page != skip:
                compute(ask, cursor)
                done.append(page)
    except _Moved:
        pass
    finally:
        cursor.close()
        if frame is not None:
            frame.join()  # its cursor shares the process's connection: nothing left running
    return done


def _read_rates_frame_ahead(process_store: Store) -> threading.Thread:
    """Rates' frame (its query over every frame trace: DuckDB's work, most of a second at
    300,000 traces) read into the process's recent frames on a thread and a cursor of its own,
    beside the Python of the other pages' views; Rates' view then finds it read, or waits for
    the read under way (annotate.store.recent)."""

    def read() -> None:
        from annotate.rates.inputs import read_frame_ahead

        cursor = process_store.session()
        try:
            opening = _rates_opening(cursor)
            if opening is not None:
                sample, _, by, judge = opening
                read_frame_ahead(cursor, sample, by, judge)
        except Exception:  # noqa: BLE001 - Rates reads it itself and reports
            log.warning("reading the rates frame ahead failed", exc_info=True)
        finally:
            cursor.close()

    thread = threading.Thread(target=read, name="annotate-ahead-frame", daemon=True)
    thread.start()
    return thread


def running() -> bool:
    """Whether a worker is computing the lead pages' views now (it imports what they need)."""
    with _GUARD:
        return bool(_STATE["running"])


def start(user: Any, page: str | None = None) -> bool:
    """From Home (page None) or a lead page: compute the other lead pages' default views in a
    worker thread, if this change of the store has not had them computed and no worker runs.
    Returns whether a worker started. Off with ANNOTATE_COMPUTE_AHEAD=0."""
    if user is None or user.role not in ("lead", "auditor"):
        return False
    if os.environ.get("ANNOTATE_COMPUTE_AHEAD", "1").strip() == "0":
        return False
    process_store = ui.process_store()
    seen = (process_store.path, change_mark(ui.store()))
    with _GUARD:
        if _STATE["running"] or _STATE["last"] == seen:
            return False
        _STATE.update(last=seen, running=True, started=_STATE["started"] + 1)
    threading.Thread(
        target=_work, args=(process_store, page), name="annotate-ahead", daemon=True
    ).start()
    return True


def _work(process_store: Store, skip: str | None) -> None:
    try:
        compute_ahead(process_store, skip)
    except Exception:  # noqa: BLE001 - the page that needs the view computes it and reports
        log.warning("computing the lead pages ahead failed", exc_info=True)
    finally:
        with _GUARD:
            _STATE["running"] = False
