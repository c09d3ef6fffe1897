"""Running a rubric version as a judge over a sample's labelled claims: plan (cost estimate,
dry run), then calls with a concurrency limit, committed as they arrive, resumable and
cancellable. (rubric version, model, claim) is judged once; a rerun retries only what failed.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from annotate.accounts.activity import Actor, as_actor, may_act
from annotate.errors import UsageError
from annotate.judge import llm
from annotate.judge.llm import DEFAULT_PRICES, PRICES_KEY  # noqa: F401 - their home was here
from annotate.judge.rubrics import prompt
from annotate.judge.rubrics.baseline import baseline_verdict
from annotate.judge.rubrics.batches import run_batch
from annotate.judge.rubrics.outcomes import resumed, run_outcome, unfinished_run  # noqa: F401 - pages import them here
from annotate.judge.rubrics.run_steps import (  # noqa: F401 - callers import them here
    QUESTION_OUTCOMES,
    Job,
    Plan,
    Progress,
    RunReport,
    _content,
    _run_row,
    _status,
    _store_verdict,
    call_for,
    ensure_question_mapping,
    finish,
    params_for,
    store_outcome,
)
from annotate.judge.rubrics.versions import BASELINE_MODEL, Rubric, get_rubric
from annotate.sampling.samples import known_sample_traces
from annotate.store import Store
from annotate.store import judge_runs as sql

OUTPUT_TOKENS_PER_CLAIM = 150
NO_KEY_FIX = ", or run the offline baseline judge (--baseline)"


def few_shot_units(rubric: Rubric) -> set[tuple[str, int]]:
    return {(e["trace_id"], int(e["claim_index"])) for e in rubric.few_shot}


def plan_run(
    store: Store,
    sample: str,
    version: int | None = None,
    model: str | None = None,
    labelled_only: bool = True,
    batch: bool = False,
) -> Plan:
    """What a run would judge and cost; nothing is called or written."""
    rubric = get_rubric(store, version)
    model = model or rubric.model
    known_sample_traces(store, sample)  # names the samples there are when it is not one
    judge = rubric.judge_name(model)
    mode = "baseline" if model == BASELINE_MODEL else "batch" if batch else "sync"
    claims = sql.sample_claims(store, sample, labelled_only)
    excluded = few_shot_units(rubric)
    done = sql.judged_claims(store, judge)
    todo = [c for c in claims if c not in excluded and c not in done]
    report = RunReport(judge, rubric.version, model, sample, mode, claims=len(claims))
    report.few_shot_excluded = sum(c in excluded for c in claims)
    report.already_done = sum(c in done and c not in excluded for c in claims)
    report.to_judge = len(todo)
    material = sql.judge_material(store, sorted({t for t, _ in todo}))
    jobs = _jobs(todo, material, rubric.granularity)
    report.calls = len(jobs)
    report.estimate = estimate(store, rubric, model, jobs, material, batch)
    return Plan(rubric, model, jobs, material, report)


def _jobs(todo: list[tuple[str, int]], material: dict[str, Any], granularity: str) -> list[Job]:
    if granularity != "response":
        return [Job(t, [(i, material[t]["claims"][i])]) for t, i in todo]
    by_trace: dict[str, list[tuple[int, str]]] = {}
    for t, i in todo:
        by_trace.setdefault(t, []).append((i, material[t]["claims"][i]))
    return [Job(t, claims) for t, claims in by_trace.items()]


def prices(store: Store) -> dict[str, list[float]]:
    return llm.prices(store)


def estimate(
    store: Store, rubric: Rubric, model: str, jobs: list[Job], material: dict[str, Any], batch: bool
) -> dict[str, Any]:
    """Tokens (about 4 characters a token, caching ignored: an upper bound) x the price table."""
    if model == BASELINE_MODEL:
        return {"input_tokens": 0, "output_tokens": 0, "usd": 0.0, "note": "offline: no calls"}
    system = len(prompt.system_prompt(rubric)) // 4
    tokens_in = sum(
        system + sum(len(b["text"]) for b in _content(material, job, rubric)) // 4 for job in jobs
    )
    tokens_out = OUTPUT_TOKENS_PER_CLAIM * sum(len(job.claims) for job in jobs)
    price = prices(store).get(model)
    if price is None:
        return {"input_tokens": tokens_in, "output_tokens": tokens_out, "usd": None,
                "note": f"no price for {model!r} in the {PRICES_KEY} setting"}  # fmt: skip
    usd = (tokens_in * price[0] + tokens_out * price[1]) / 1e6 * (0.5 if batch else 1.0)
    note = "Message Batches: half price" if batch else "4 characters a token, no cache discount"
    return {
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "usd": round(usd, 4),
        "note": note,
    }


def nothing_to_judge(report: RunReport, labelled_only: bool = True) -> str | None:
    """Why a run found no claim and what to do; None when the sample has claims to judge."""
    if report.claims:
        return None
    if labelled_only:
        return (
            f"nothing to judge: sample {report.sample!r} has no labelled claim yet; label some "
            "(the Label page or `annotate import-labels`), or judge every claim with --all-claims"
        )
    return (
        f"nothing to judge: sample {report.sample!r} has no claims; "
        f"make them with `annotate claims --sample {report.sample}`"
    )


def estimate_text(cost: Mapping[str, Any]) -> str:
    """An estimate for people (the CLI and the Rubric page): tokens, then dollars or why not."""
    tokens = f"{cost.get('input_tokens') or 0:,} input + {cost.get('output_tokens') or 0:,} output tokens"
    if cost.get("usd") is None:
        return f"{tokens}, cost unknown ({cost.get('note')})"
    return f"{tokens}, ${cost['usd']} ({cost.get('note')})"


def run_judge(
    store: Store,
    sample: str,
    version: int | None = None,
    *,
    model: str | None = None,
    client: Any = None,
    concurrency: int = 8,
    batch: bool = False,
    dry_run: bool = False,
    labelled_only: bool = True,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    retry: llm.Retry | None = None,
    poll_seconds: float = 30.0,
    actor: Actor | str | None = None,
) -> RunReport:
    """Judge every claim of the plan; verdicts commit as they arrive (a stop keeps them)."""
    if concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {concurrency}")
    if not (poll_seconds > 0 and math.isfinite(poll_seconds)):
        raise UsageError(f"--poll-seconds must be a positive number of seconds, got {poll_seconds}")
    plan = plan_run(store, sample, version, model, labelled_only, batch)
    report = plan.report
    report.dry_run = dry_run
    if not dry_run:
        sql.interrupt_dead_runs(store)
    report.resumes = resumed(unfinished_run(store, report.judge, sample))
    if dry_run or not report.claims:  # no claims: no key needed, no empty run recorded
        report.status = "planned" if dry_run else "done"
        return report
    if plan.model != BASELINE_MODEL and client is None:
        client = llm.make_client("the LLM judge", NO_KEY_FIX)
    who = as_actor(actor)
    may_act(who, "judge_run")  # before any call is paid for
    if batch and plan.model != BASELINE_MODEL:
        return run_batch(store, plan, client, who, progress, poll_seconds, cancel)
    with store.transaction():
        ensure_question_mapping(store, report.judge, plan.rubric.granularity, who)
        report.run_id = sql.start_run(store, _run_row(report, who))
    status = "cancelled"
    try:
        if plan.model == BASELINE_MODEL:
            _run_baseline(store, plan, progress)
        else:
            _run_calls(store, plan, client, concurrency, retry, progress, cancel)
        status = "cancelled" if cancel is not None and cancel.is_set() else _status(report)
    finally:
        finish(store, plan, status, who)
    return report


def _run_baseline(store: Store, plan: Plan, progress: Progress | None) -> None:
    for start in range(0, len(plan.jobs), 500):
        chunk = plan.jobs[start : start + 500]
        with store.transaction():
            for job in chunk:
                material = plan.material[job.trace_id]
                for index, text in job.claims:
                    verdict = baseline_verdict(plan.rubric, material, text)
                    _store_verdict(store, plan, job.trace_id, index, verdict, None, material)
        if progress:
            progress(min(start + 500, len(plan.jobs)), len(plan.jobs))


def _run_calls(
    store: Store, plan: Plan, client: Any, concurrency: int, retry: llm.Retry | None,
    progress: Progress | None, cancel: threading.Event | None,
) -> None:  # fmt: skip
    pending = list(reversed(plan.jobs))
    running: dict[Future[Any], Job] = {}
    finished = 0
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge")
    try:
        while pending or running:
            while pending and len(running) < concurrency and not (cancel and cancel.is_set()):
                job = pending.pop()
                running[pool.submit(_call, plan, client, job, retry)] = job
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            _store_answers(store, plan, running, done)
            finished += len(done)
            if progress:
                progress(finished, len(plan.jobs))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        # Left early (a rerun of the page interrupts its script): the calls in flight were
        # answered and paid for while the pool shut down; keep them as a finished loop would.
        _store_answers(store, plan, running, [f for f in running if _answered(f)])


def _answered(future: Future[Any]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


def _store_answers(store: Store, plan: Plan, running: dict[Future[Any], Job], done: Any) -> None:
    """The answers of `done`, with their calls, in one commit; then off the running list."""
    with store.transaction():
        for future in done:
            job = running[future]
            store_outcome(store, plan, job, _saved(store, plan, job, future.result()))
    for future in done:
        del running[future]


def _call(plan: Plan, client: Any, job: Job, retry: llm.Retry | None) -> llm.Answer:
    """In a worker thread: the call only; the main thread stores it."""
    rubric = plan.rubric
    params = params_for(rubric, plan.model, job, plan.material)
    parse = prompt.parser(rubric, len(job.claims))
    call = call_for(rubric, plan.model, job, plan.report.sample)
    return llm.call_structured(client, call, params, parse, retry)


def _saved(store: Store, plan: Plan, job: Job, answer: llm.Answer) -> Any:
    try:
        call = call_for(plan.rubric, plan.model, job, plan.report.sample)
        return llm.save_answer(store, call, answer)
    except llm.LLMError as exc:
        return exc
