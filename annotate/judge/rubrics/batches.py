"""Message Batches mode for large runs: submit every call of a plan as one batch (half the
price), poll until it ends, collect the results by custom_id. The batch id is stored, so a
run stopped while the batch is processing resumes by polling the same batch.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from annotate.accounts.activity import Actor
from annotate.judge import llm
from annotate.judge.rubrics import prompt
from annotate.judge.rubrics.run_steps import (
    Job,
    Plan,
    Progress,
    RunReport,
    _run_row,
    call_for,
    ensure_question_mapping,
    finish,
    params_for,
    store_outcome,
)
from annotate.store import Store
from annotate.store import judge_runs as sql


def run_batch(
    store: Store,
    plan: Plan,
    client: Any,
    who: Actor,
    progress: Progress | None,
    poll_seconds: float,
    cancel: threading.Event | None,
) -> RunReport:
    report = plan.report
    open_run = sql.open_batch_run(store, report.judge, report.sample)
    if open_run is not None:
        report.run_id, batch_id = int(open_run["id"]), str(open_run["batch_id"])
    elif not plan.jobs:
        finish(store, plan, "done", who)
        return report
    else:
        batch_id = submit(store, plan, client, who)
    jobs = _pending(store, report.judge, _jobs_of(store, plan, report.run_id or 0))
    if not _wait(client, batch_id, poll_seconds, cancel, progress):
        report.status = "submitted"
        return report
    calls = {
        custom_id: call_for(plan.rubric, plan.model, job, report.sample)
        for custom_id, job in jobs.items()
    }
    parsers = {c: prompt.parser(plan.rubric, len(job.claims)) for c, job in jobs.items()}
    results = iter(llm.collect_batch(store, client, batch_id, calls, parsers))
    while True:
        with store.transaction():  # a call's record and its verdicts: one commit
            item = next(results, None)
            if item is None:
                break
            custom_id, result, error, call_id = item
            outcome = error if error is not None else (result, call_id)
            store_outcome(store, plan, jobs[custom_id], outcome)
    finish(store, plan, "failed" if report.failed else "done", who)
    return report


def submit(store: Store, plan: Plan, client: Any, who: Actor) -> str:
    report = plan.report
    with store.transaction():
        ensure_question_mapping(store, report.judge, plan.rubric.granularity, who)
        report.run_id = sql.start_run(store, _run_row(report, who))
    requests, items = [], []
    for number, job in enumerate(plan.jobs):
        custom_id = f"r{report.run_id}-{number}"
        params = params_for(plan.rubric, plan.model, job, plan.material)
        requests.append({"custom_id": custom_id, "params": params})
        items += [(custom_id, job.trace_id, index) for index, _ in job.claims]
    batch_id = llm.submit_batch(client, requests)
    with store.transaction():
        sql.insert_batch_items(store, report.run_id, items)
        sql.set_batch(store, report.run_id, batch_id)
    return batch_id


def _jobs_of(store: Store, plan: Plan, run_id: int) -> dict[str, Job]:
    items = sql.batch_items(store, run_id)
    material = sql.judge_material(store, sorted({t for ids in items.values() for t, _ in ids}))
    plan.material.update(material)
    return {
        custom_id: Job(ids[0][0], [(i, material[t]["claims"][i]) for t, i in ids])
        for custom_id, ids in items.items()
    }


def _pending(store: Store, judge: str, jobs: dict[str, Job]) -> dict[str, Job]:
    """The jobs with a claim still unjudged. A run stopped while collecting stored the others
    with their calls: collecting them again would record each call twice."""
    done = sql.judged_claims(store, judge)
    return {
        custom_id: job
        for custom_id, job in jobs.items()
        if any((job.trace_id, index) not in done for index, _ in job.claims)
    }


def _wait(
    client: Any,
    batch_id: str,
    poll_seconds: float,
    cancel: threading.Event | None,
    progress: Progress | None,
) -> bool:
    """Poll until the batch ends (True) or the run is cancelled (False: resume later)."""
    while True:
        status = llm.batch_status(client, batch_id)
        if progress:
            total = status["processing"] + status["succeeded"] + status["errored"]
            progress(status["succeeded"] + status["errored"], total)
        if status["status"] == "ended":
            return True
        if cancel is not None and cancel.is_set():
            return False
        time.sleep(poll_seconds)
