"""Evaluations imported after their spans: attach each to the OTLP call already in the store.

An OTLP file of log records (or span events) whose spans came in an earlier import gives
"evaluation" Records; each attaches to the stored call with its span id (or response id).
One whose span is neither in its own file nor in the store is rejected by line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from annotate.ingest.otlp_evaluations import EVALUATION, OTEL_FIELDS
from annotate.store import Store
from annotate.store import imports as sql
from annotate.traces import JudgeVerdict, Record, RowError, check_verdict


@dataclass
class Attached:
    attached: int = 0
    duplicates: int = 0
    errors: list[RowError] = field(default_factory=list)


def attach_evaluations(store: Store, import_id: int, records: Sequence[Record]) -> Attached:
    """Insert each evaluation's verdict on its stored call; the same verdict twice is a duplicate."""
    outcome = Attached()
    if not records:
        return outcome
    calls = sql.otel_calls(
        store,
        [r.data["otel_span_id"] for r in records if r.data.get("otel_span_id")],
        [r.data["response_id"] for r in records if r.data.get("response_id")],
    )
    held = sql.stored_verdict_keys(store, sorted({call[0] for call in calls}))
    new: list[tuple[str, JudgeVerdict]] = []
    for record in records:
        targets = _targets(record.data, calls)
        verdict = check_verdict(record.data["verdict"])
        if isinstance(verdict, tuple):
            name, message = verdict
            outcome.errors.append(RowError(record.line, OTEL_FIELDS.get(name, EVALUATION), message))
        elif not targets:
            outcome.errors.append(RowError(record.line, EVALUATION, _nowhere(record.data)))
        else:
            _add(outcome, new, held, targets, verdict)
    sql.insert_verdicts(store, import_id, new)
    return outcome


def _targets(data: dict[str, Any], calls: list[tuple[Any, ...]]) -> list[str]:
    span, trace, response = (
        data.get("otel_span_id"),
        data.get("otel_trace_id"),
        data.get("response_id"),
    )
    by_span = [c[0] for c in calls if span and c[2] == span and (not trace or c[1] == trace)]
    return by_span or [c[0] for c in calls if response and c[3] == response]


def _add(
    outcome: Attached,
    new: list[tuple[str, JudgeVerdict]],
    held: set[tuple[Any, ...]],
    targets: list[str],
    verdict: JudgeVerdict,
) -> None:
    fresh = False
    for trace_id in targets:
        key = (
            trace_id,
            verdict.judge,
            verdict.level,
            verdict.label,
            verdict.score,
            verdict.explanation,
        )
        if key not in held:
            held.add(key)
            new.append((trace_id, verdict))
            fresh = True
    if fresh:
        outcome.attached += 1
    else:
        outcome.duplicates += 1


def _nowhere(data: dict[str, Any]) -> str:
    judge = data["verdict"].get("judge") or "an unnamed judge"
    if not any(data.get(k) for k in ("otel_span_id", "otel_trace_id", "response_id")):
        return (
            f"from {judge!r} names no span, trace or response it is about; give the "
            "evaluation event its span's ids (or gen_ai.response.id), as an evaluation "
            "recorded in the span itself has them"
        )
    return (
        f"from {judge!r} names span {data.get('otel_span_id') or '-'} of trace "
        f"{data.get('otel_trace_id') or '-'}, which is neither in this file nor in the store; "
        "import the spans first (or export spans and evaluations to the same file)"
    )
