"""Running a rubric version as a judge over a sample's labelled claims: plan (cost estimate,
dry run), then calls with a concurrency limit, committed as they arrive, resumable and
cancellable. (rubric version, model, claim) is judged once; a rerun retries only what failed.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

from annotate import llm
from annotate.accounts.activity import Actor, as_actor, may_act, record_act
from annotate.errors import UsageError
from annotate.llm import DEFAULT_PRICES, PRICES_KEY  # noqa: F401 - their home was here
from annotate.rubrics import prompt
from annotate.rubrics.baseline import baseline_verdict
from annotate.rubrics.outcomes import resumed, run_outcome, unfinished_run  # noqa: F401 - pages import them here
from annotate.rubrics.rating_judge import store_run_ratings
from annotate.rubrics.versions import BASELINE_MODEL, Rubric, get_rubric
from annotate.sampling.samples import known_sample_traces
from annotate.spend.pricing import judge_run_spend
from annotate.store import Store
from annotate.store import judge_labels as label_sql
from annotate.store import judge_runs as sql

OUTPUT_TOKENS_PER_CLAIM = 150
NO_KEY_FIX = ", or run the offline baseline judge (--baseline)"
QUESTION_OUTCOMES = {"yes": "supported", "no": "unsupported", "unknown": "abstained"}

Progress = Callable[[int, int], None]


@dataclass
class Job:
    """One call: a trace and the claims it judges (one, or all of a response's)."""

    trace_id: str
    claims: list[tuple[int, str]]


@dataclass
class RunReport:
    judge: str
    rubric_version: int
    model: str
    sample: str
    mode: str
    claims: int = 0
    already_done: int = 0
    few_shot_excluded: int = 0
    to_judge: int = 0
    judged: int = 0
    failed: int = 0
    calls: int = 0
    status: str = "planned"
    run_id: int | None = None
    dry_run: bool = False
    estimate: dict[str, Any] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    # the last run of this judge on this sample when it stopped before its end: what this resumes
    resumes: dict[str, Any] | None = None
    # what the run's calls used and cost (annotate.spend), once it has ended
    spend: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """The `annotate judge --json` document; its names are a contract."""
        return asdict(self)


@dataclass
class Plan:
    rubric: Rubric
    model: str
    jobs: list[Job]
    material: dict[str, dict[str, Any]]
    report: RunReport


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


def _content(material: dict[str, Any], job: Job, rubric: Rubric) -> list[dict[str, Any]]:
    return prompt.claim_content(material[job.trace_id], job.claims, rubric.granularity)


def call_for(rubric: Rubric, model: str, job: Job, sample: str | None = None) -> llm.LLMCall:
    return llm.LLMCall(
        "judge", model, f"rubric-v{rubric.version}/{prompt.template_hash()}", job.trace_id,
        sample, rubric.version,
    )  # fmt: skip


def params_for(rubric: Rubric, model: str, job: Job, material: dict[str, Any]) -> dict[str, Any]:
    call = call_for(rubric, model, job)
    return prompt.judge_params(rubric, call, material[job.trace_id], job.claims)


def ensure_question_mapping(store: Store, judge: str, granularity: str, actor: Actor) -> None:
    """A question-form judge answers yes / no / unknown: saved as its label mapping."""
    if granularity != "question":
        return
    saved = label_sql.saved_mapping(store, judge)
    for label, outcome in QUESTION_OUTCOMES.items():
        if (judge, label) not in saved:
            label_sql.save_mapping(store, judge, label, outcome, actor.name)


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
        from annotate.rubrics.batches import run_batch

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


def _status(report: RunReport) -> str:
    return "failed" if report.failed else "done"


def _run_row(report: RunReport, who: Actor) -> dict[str, Any]:
    return {
        "judge": report.judge, "rubric_version": report.rubric_version, "model": report.model,
        "sample": report.sample, "mode": report.mode, "claims": report.to_judge,
        "estimate": report.estimate, "created_by": who.name,
    }  # fmt: skip


def finish(store: Store, plan: Plan, status: str, who: Actor) -> None:
    """Record the run's end; its failures are those of the claims it set out to judge (the
    judge's failures on other samples or claims are not this run's to retry)."""
    report = plan.report
    report.status = status
    scope = {(job.trace_id, index) for job in plan.jobs for index, _ in job.claims}
    report.failures = [
        f for f in sql.open_failures(store, report.judge)
        if (f["trace_id"], int(f["claim_index"])) in scope
    ]  # fmt: skip
    report.spend = judge_run_spend(store, report.run_id)
    with store.transaction():
        if report.run_id is not None:
            sql.finish_run(store, report.run_id, status, report.judged, report.failed)
        record_act(
            store, who, "judge_run", report.sample, judge=report.judge, status=status,
            judged=report.judged, failed=report.failed, run_id=report.run_id, spend=report.spend,
        )  # fmt: skip


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


def _store_verdict(store: Store, plan: Plan, trace_id: str, index: int, verdict: Any,
                   call_id: int | None, material: dict[str, Any]) -> None:  # fmt: skip
    report = plan.report
    sql.insert_verdict(
        store,
        {
            "trace_id": trace_id, "claim_index": index, "judge": report.judge,
            "label": verdict.label, "reasoning": verdict.reasoning, "run_id": report.run_id,
            "rubric_version": report.rubric_version, "model": report.model,
            "error_type": verdict.error_type, "evidence": verdict.evidence or None,
            "quote_found": prompt.quote_found(verdict.evidence, material), "llm_call_id": call_id,
        },
    )  # fmt: skip
    report.judged += 1


def store_outcome(store: Store, plan: Plan, job: Job, result: Any) -> None:
    """One finished call: its verdicts, or a failure per claim (with the recorded call)."""
    report = plan.report
    with store.transaction():
        if isinstance(result, llm.LLMError):
            for index, _ in job.claims:
                sql.insert_failure(store, {
                    "run_id": report.run_id, "judge": report.judge, "trace_id": job.trace_id,
                    "claim_index": index, "error": str(result), "llm_call_id": result.call_id,
                })  # fmt: skip
                report.failed += 1
            return
        verdicts, call_id = result
        for (index, _), verdict in zip(job.claims, verdicts, strict=True):
            _store_verdict(
                store, plan, job.trace_id, index, verdict, call_id, plan.material[job.trace_id]
            )
        store_run_ratings(store, report, job.trace_id, verdicts, call_id)  # with_claims


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
