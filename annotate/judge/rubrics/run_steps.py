"""The parts of a judge run that the synchronous runner (runner.py) and Message Batches
(batches.py) share: the plan and report, one call's parameters, storing an outcome, finishing
the run. Apart from both so that neither imports the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from annotate.accounts.activity import Actor, record_act
from annotate.judge import llm
from annotate.judge.rubrics import prompt
from annotate.judge.rubrics.rating_judge import store_run_ratings
from annotate.judge.rubrics.versions import Rubric
from annotate.spend.pricing import judge_run_spend
from annotate.store import Store
from annotate.store import judge_labels as label_sql
from annotate.store import judge_runs as sql

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
