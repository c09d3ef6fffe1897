"""GenAI semantic-convention attributes that are not a span's messages: which keys are prompt
and completion text (kept as request/response, never copied into attributes), why a call's
gen_ai.output.messages gave no answer, and a gen_ai.evaluation.result as a verdict. Reading
the messages themselves is annotate.ingest.conventions.genai.
"""

from __future__ import annotations

import json
import re
from typing import Any

from annotate.ingest.generic import json_problem
from annotate.traces import describe_type, shown

OUTPUT = "gen_ai.output.messages"
CONTENT_KEYS = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.prompt",
        "gen_ai.completion",
    }
)
_INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")


def is_content_key(key: str) -> bool:
    """Prompt and completion text: kept as request/response, not copied into attributes."""
    return key in CONTENT_KEYS or _INDEXED.match(key) is not None


_MESSAGES_SHAPE = '[{"role": "assistant", "parts": [{"type": "text", "content": "..."}]}]'


def output_problem(attributes: dict[str, Any], span: str) -> str | None:
    """Why a call's gen_ai.output.messages, when set, gave no answer: not JSON, not a list of
    message objects, or messages with no assistant text. None when it is not set at all.
    `span` names the call in the message."""
    value = attributes.get(OUTPUT)
    if value is None:
        return None
    fix = (
        f"it must be the output messages as JSON, such as {_MESSAGES_SHAPE}; fix the "
        "instrumentation that records it, then export the span again"
    )
    decoded = value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return f"of {span} is not valid JSON ({json_problem(value)}); {fix}"
    found = f"{describe_type(decoded)} ({shown(decoded)})"
    if isinstance(value, str):
        found = f"a string whose JSON is {found}"
    if isinstance(decoded, dict):
        decoded = [decoded]
    if not isinstance(decoded, list):
        return f"of {span} must be a list of messages, got {found}; {fix}"
    if decoded and not any(isinstance(message, dict) for message in decoded):
        return f"of {span} must be a list of message objects, got {found}; {fix}"
    return (
        f"of {span} holds no assistant text (got {shown(value)}): there is no answer to "
        "judge, so the call is skipped; if the model did answer, check that the "
        "instrumentation records its text parts"
    )


def verdict_of(evaluation: dict[str, Any]) -> dict[str, Any] | None:
    """A gen_ai.evaluation.result as a response-level verdict; None without a label."""
    label = evaluation.get("gen_ai.evaluation.score.label")
    if label is None or str(label) == "":
        return None
    explanation = evaluation.get("gen_ai.evaluation.explanation")
    return {
        "judge": str(evaluation.get("gen_ai.evaluation.name") or "otel-evaluation"),
        "level": "response",
        "label": str(label),
        "score": _number(evaluation.get("gen_ai.evaluation.score.value")),
        "explanation": explanation if isinstance(explanation, str) else None,
    }


def _number(value: Any) -> Any:
    """A float for a number or numeric text; anything else as it came, for the evaluation's
    check to reject by name (a grade such as "high" is not a score)."""
    if isinstance(value, bool) or value is None:
        return value
    try:
        return float(value)
    except OverflowError:
        return float("inf")  # rejected by the evaluation's check as not finite
    except (TypeError, ValueError):
        return value
