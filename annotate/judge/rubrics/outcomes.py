"""What became of a judge run, for the Rubric page and `annotate judge`: the last run that
stopped before its end (cancelled, failed calls, interrupted when its process died) and its
outcome in words. Reads the store; writes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.errors import counted
from annotate.store import Store
from annotate.store import judge_runs as sql


def unfinished_run(store: Store, judge: str, sample: str) -> dict[str, Any] | None:
    """The last run of `judge` on `sample` when it stopped before the end (cancelled, failed
    calls, interrupted: its process died; or still running): what a rerun would resume."""
    last = sql.last_run(store, judge, sample)
    stopped = ("cancelled", "failed", "interrupted", "running")
    return last if last and last["status"] in stopped else None


def run_outcome(run: Mapping[str, Any]) -> str:
    """What became of a run, in words (the Rubric page and `annotate judge`)."""
    started = f"{run['started_at']:%Y-%m-%d %H:%M}"
    stored = f"{counted(run['judged'], 'verdict')} stored, {run['failed']} failed"
    if run["status"] == "running":
        return f"the run started {started} is still running"
    if run["status"] == "interrupted":
        return f"the run started {started} was interrupted (its process stopped) with {stored}"
    return f"the run started {started} ended {run['status']} with {stored}"


def resumed(run: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The stopped run a new one resumes, for its report (JSON-ready but for times)."""
    if run is None:
        return None
    keys = ("id", "status", "judged", "failed", "started_at", "finished_at")
    found = {key: run[key] for key in keys}
    return {**found, "outcome": run_outcome(run)}
