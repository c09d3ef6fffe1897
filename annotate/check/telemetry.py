"""A check's verdict on the caller's OpenTelemetry span: `grounded_answer` as a span attribute
and a gen_ai.evaluation.result event (the GenAI semantic conventions' evaluation record) named
by the rubric, so `annotate import` of the app's traces brings it back as judge check-v{hash}.

Imports only the OpenTelemetry API, and only when the caller gave the check a tracer.
"""

from __future__ import annotations

from typing import Any

from annotate.check.result import CheckResult

EVALUATION_EVENT = "gen_ai.evaluation.result"  # as annotate.ingest.otlp_evaluations reads it
SPAN_ATTRIBUTE = "grounded_answer"


def evaluation_attributes(result: CheckResult, response_id: str | None) -> dict[str, Any]:
    """The event's attributes: the semantic conventions' names, then this app's own."""
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": result.judge,
        "gen_ai.evaluation.score.label": result.label,
        "gen_ai.evaluation.explanation": result.explanation(),
        "annotate.check.rubric_hash": result.rubric["content_hash"],
        "annotate.check.rubric_version": result.rubric["version"],
        "annotate.check.model": result.model,
        "annotate.check.fallback": result.fallback,
    }
    if isinstance(result.grounded_answer, bool):
        attributes["gen_ai.evaluation.score.value"] = 1.0 if result.grounded_answer else 0.0
    if response_id:
        attributes["gen_ai.response.id"] = response_id
    for name in ("sensitivity", "specificity"):
        value = (result.held_out.get(name) or {}).get("value")
        if value is not None:
            attributes[f"annotate.check.held_out_{name}"] = float(value)
    return attributes


def record_on_current_span(result: CheckResult, response_id: str | None = None) -> bool:
    """Set the attribute and add the event on the current span; False when none records."""
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording():
        return False
    grounded = result.grounded_answer
    span.set_attribute(SPAN_ATTRIBUTE, grounded if isinstance(grounded, bool) else str(grounded))
    span.add_event(EVALUATION_EVENT, evaluation_attributes(result, response_id))
    return True
