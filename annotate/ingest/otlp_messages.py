"""GenAI semantic conventions on one span's decoded attributes: is it a model call, what
was asked and answered, which tool and retrieval results it carries, what a judge said.

Pure functions over plain dicts (OTLP AnyValues already decoded); no file reading, ids or
span trees here: that is annotate.ingest.otlp.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from annotate.ingest.generic import json_problem
from annotate.traces import describe_type, shown

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "invoke_agent"})
# Well-known gen_ai.operation.name values that are not a model answering a prompt.
NOT_LLM_OPERATIONS = frozenset(
    {
        "execute_tool",
        "embeddings",
        "retrieval",
        "create_agent",
        "invoke_workflow",
        "plan",
        "create_memory",
        "create_memory_store",
        "delete_memory",
        "delete_memory_store",
        "search_memory",
        "update_memory",
        "upsert_memory",
    }
)
OUTPUT = "gen_ai.output.messages"
MODEL_KEYS = ("gen_ai.request.model", "gen_ai.system", "gen_ai.provider.name")
NOT_LLM_REQUEST_TYPES = ("embedding", "rerank")  # OpenLLMetry's llm.request.type
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
TOOL_CALL_FINISH = ("tool_call", "tool_calls", "function_call")
_INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")
_OPENINFERENCE_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(content|id)$")


def is_llm_span(attributes: dict[str, Any]) -> bool:
    """A model call by its operation name or, failing that, by naming a model or provider."""
    operation = _text_value(attributes.get("gen_ai.operation.name"))
    if operation in LLM_OPERATIONS:
        return True
    if operation in NOT_LLM_OPERATIONS:
        return False
    if attributes.get("llm.request.type") in NOT_LLM_REQUEST_TYPES:
        return False
    return any(key in attributes for key in MODEL_KEYS)


def _text_value(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def is_content_key(key: str) -> bool:
    """Prompt and completion text: kept as request/response, not copied into attributes."""
    return key in CONTENT_KEYS or _INDEXED.match(key) is not None


def request_of(attributes: dict[str, Any]) -> str | None:
    """The text of the last user message the model saw."""
    texts = [text_of(m) for m in input_messages(attributes) if m.get("role", "user") == "user"]
    texts = [text for text in texts if text]
    return texts[-1] if texts else None


def response_of(attributes: dict[str, Any]) -> str | None:
    """The text of the first assistant output (the first choice when there are several)."""
    for message in output_messages(attributes):
        if message.get("role", "assistant") in ("assistant", "model") and text_of(message):
            return text_of(message)
    return None


def requested_tools_only(attributes: dict[str, Any]) -> bool:
    """An agent step that answered with tool calls: there is no text to check yet."""
    return any(_has_tool_call(m) for m in output_messages(attributes))


def input_messages(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return (
        messages(attributes.get("gen_ai.input.messages"))
        or _indexed(attributes, "prompt")
        or _plain(attributes.get("gen_ai.prompt"), "user")
    )


def output_messages(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return (
        messages(attributes.get(OUTPUT))
        or _indexed(attributes, "completion")
        or _plain(attributes.get("gen_ai.completion"), "assistant")
    )


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


def messages(value: Any) -> list[dict[str, Any]]:
    """A message list given as a JSON string or as an already structured OTLP array."""
    value = _decoded_json(value)
    if isinstance(value, dict):
        value = [value]
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def text_of(message: dict[str, Any]) -> str:
    """Text parts of a message: semconv `parts`, a `content` string, or a list of content parts."""
    if isinstance(message.get("parts"), list):
        return _joined_text(message["parts"])
    content = message.get("content")
    if isinstance(content, str):
        listed = _content_parts(content)
        return content if listed is None else _joined_text(listed)
    return _joined_text(content) if isinstance(content, list) else ""


def _parts(message: dict[str, Any]) -> list[Any]:
    parts = message.get("parts")
    return parts if isinstance(parts, list) else []


def _joined_text(parts: list[Any]) -> str:
    """Semconv text parts say `content`, OpenAI- and Anthropic-style ones say `text`."""
    texts = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("content") if isinstance(part.get("content"), str) else part.get("text")
            texts.append(text if isinstance(text, str) else "")
    return "\n".join(text for text in texts if text)


def _content_parts(content: str) -> list[Any] | None:
    """Some instrumentations store a message's content parts as a JSON string."""
    if not content.lstrip().startswith("[{"):
        return None
    parsed = _decoded_json(content)
    if isinstance(parsed, list) and all(isinstance(p, dict) and "type" in p for p in parsed):
        return parsed
    return None


def _decoded_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def _indexed(attributes: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """OpenLLMetry's gen_ai.prompt.0.role / gen_ai.prompt.0.content, in index order."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _INDEXED.match(key)
        if match and match.group(1) == kind:
            found.setdefault(int(match.group(2)), {})[match.group(3)] = value
    return [found[index] for index in sorted(found)]


def _plain(value: Any, role: str) -> list[dict[str, Any]]:
    if not isinstance(value, str) or not value.strip():
        return []
    return messages(value) or [{"role": role, "content": value}]


def _has_tool_call(message: dict[str, Any]) -> bool:
    return (
        any(isinstance(p, dict) and p.get("type") == "tool_call" for p in _parts(message))
        or bool(message.get("tool_calls"))
        or any(key.startswith("tool_calls.") for key in message)
        or message.get("finish_reason") in TOOL_CALL_FINISH
    )


def span_context(attributes: dict[str, Any], span_name: str) -> list[dict[str, str]]:
    """What a tool or retrieval span handed on: gen_ai.tool.call.result or retrieved documents."""
    if attributes.get("gen_ai.operation.name") == "execute_tool":
        result = attributes.get("gen_ai.tool.call.result")
        name = attributes.get("gen_ai.tool.name") or span_name
        return [] if result is None else _items([(name, result)])
    fallback = str(attributes.get("gen_ai.data_source.id") or span_name)
    documents = _openinference_documents(attributes) + messages(
        attributes.get("gen_ai.retrieval.documents")
    )
    return _items(
        (doc.get("id") or f"{fallback} #{index}", doc.get("content", doc.get("text")))
        for index, doc in enumerate(documents)
    )


def _openinference_documents(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _OPENINFERENCE_DOC.match(key)
        if match:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [found[index] for index in sorted(found)]


def message_tool_results(attributes: dict[str, Any]) -> list[dict[str, str]]:
    """Tool results the model was sent inside its own input messages."""
    history = input_messages(attributes)
    names = _tool_names(history)
    results: list[tuple[Any, Any]] = []
    for message in history:
        if "parts" not in message and message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            name = message.get("name") or names.get(_text_value(call_id))
            results.append((name or call_id, text_of(message)))
        for part in _parts(message):
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                result = part.get("response", part.get("result"))
                name = part.get("name") or names.get(_text_value(part.get("id")))
                results.append((name, result))
    return _items((source or "tool", text) for source, text in results)


def _tool_names(history: list[dict[str, Any]]) -> dict[str | None, Any]:
    """Tool call id -> tool name, from the assistant's tool calls earlier in the history."""
    names: dict[str | None, Any] = {}
    for message in history:
        for part in _parts(message):
            if isinstance(part, dict) and part.get("type") == "tool_call":
                names[_text_value(part.get("id"))] = part.get("name")
        for key, value in message.items():
            if key.startswith("tool_calls.") and key.endswith(".id"):
                names[_text_value(value)] = message.get(key[: -len("id")] + "name")
    names.pop(None, None)
    return names


def _items(pairs: Iterable[tuple[Any, Any]]) -> list[dict[str, str]]:
    items = []
    for source, value in pairs:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if value is not None and text.strip():
            items.append({"source": str(source), "text": text})
    return items


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
