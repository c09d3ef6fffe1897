"""The OTel GenAI semantic conventions, in the forms instrumentations write them: the current
attributes (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions), the
events form (gen_ai.system/user/assistant/tool.message and gen_ai.choice, as span events or
log records), and OpenLLMetry's indexed gen_ai.prompt.N.* / gen_ai.completion.N.*.
Retrievals: gen_ai.retrieval.documents; tools: execute_tool spans' gen_ai.tool.call.result.
"""

from __future__ import annotations

from typing import Any

from annotate.ingest.conventions import LLM, OTHER, RETRIEVAL, TOOL, SpanView
from annotate.ingest.conventions.messages import (
    Message,
    as_text,
    decoded,
    message_list,
    normalise,
    unflatten,
)
from annotate.ingest.conventions.provider import TOOL_STOPS

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
MODEL_KEYS = ("gen_ai.request.model", "gen_ai.system", "gen_ai.provider.name")
NOT_LLM_REQUEST_TYPES = ("embedding", "rerank")  # OpenLLMetry's llm.request.type
INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
MESSAGE_EVENTS = frozenset({*INPUT_EVENTS, CHOICE_EVENT})


def view(attributes: dict[str, Any], events: list[tuple[str, Any]]) -> SpanView:
    kind = _kind(attributes)
    found = SpanView(kind, "genai", model=_model(attributes))
    if kind == LLM:
        found.inputs = _system(attributes) + (_inputs(attributes) or _event_inputs(events))
        found.outputs = _outputs(attributes) or _event_outputs(events)
    elif kind == TOOL:
        found.tool_name = _text(attributes.get("gen_ai.tool.name"))
        result = attributes.get("gen_ai.tool.call.result")
        found.tool_result = None if result is None else as_text(decoded(result))
    found.documents = _documents(attributes.get("gen_ai.retrieval.documents"))
    if found.documents and kind == OTHER:
        found.kind = RETRIEVAL
    return found


def _kind(attributes: dict[str, Any]) -> str:
    operation = _text(attributes.get("gen_ai.operation.name"))
    if operation in LLM_OPERATIONS:
        return LLM
    if operation == "execute_tool":
        return TOOL
    if operation == "retrieval":
        return RETRIEVAL
    if operation in NOT_LLM_OPERATIONS:
        return OTHER
    if attributes.get("llm.request.type") in NOT_LLM_REQUEST_TYPES:
        return OTHER
    return LLM if any(key in attributes for key in MODEL_KEYS) else OTHER


def _model(attributes: dict[str, Any]) -> str | None:
    return _text(attributes.get("gen_ai.response.model")) or _text(
        attributes.get("gen_ai.request.model")
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _system(attributes: dict[str, Any]) -> list[Message]:
    value = decoded(attributes.get("gen_ai.system_instructions"))
    if value in (None, "", []):
        return []
    return [normalise({"role": "system", "content": value})]


def _inputs(attributes: dict[str, Any]) -> list[Message]:
    return (
        message_list(attributes.get("gen_ai.input.messages"))
        or [normalise(m) for m in unflatten(attributes, "gen_ai.prompt")]
        or _plain(attributes.get("gen_ai.prompt"), "user")
    )


def _outputs(attributes: dict[str, Any]) -> list[Message]:
    found = message_list(attributes.get("gen_ai.output.messages"))
    if found:
        return [_with_stop(m, raw) for m, raw in zip(found, _raw_list(attributes), strict=False)]
    indexed = unflatten(attributes, "gen_ai.completion")
    if indexed:
        return [_with_stop(normalise({"role": "assistant", **m}), m) for m in indexed]
    return _plain(attributes.get("gen_ai.completion"), "assistant")


def _raw_list(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    value = decoded(attributes.get("gen_ai.output.messages"))
    value = [value] if isinstance(value, dict) else value
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _with_stop(message: Message, raw: dict[str, Any]) -> Message:
    """A message that stopped for a tool call is an agent step even when its parts show none."""
    if raw.get("finish_reason") in TOOL_STOPS and not _has_call(message):
        message["parts"].append({"type": "tool_call", "id": None, "name": None})
    return message


def _has_call(message: Message) -> bool:
    return any(p["type"] == "tool_call" for p in message["parts"])


def _plain(value: Any, role: str) -> list[Message]:
    if not isinstance(value, str) or not value.strip():
        return []
    return message_list(value) or [normalise({"role": role, "content": value})]


def _event_inputs(events: list[tuple[str, Any]]) -> list[Message]:
    found = []
    for name, body in events:
        if name in INPUT_EVENTS and isinstance(body, dict):
            found.append(normalise({**body, "role": body.get("role") or INPUT_EVENTS[name]}))
    return found


def _event_outputs(events: list[tuple[str, Any]]) -> list[Message]:
    choices = [body for name, body in events if name == CHOICE_EVENT and isinstance(body, dict)]
    choices.sort(key=lambda body: body["index"] if isinstance(body.get("index"), int) else 0)
    found = []
    for body in choices[:1]:
        message: dict[str, Any] = body["message"] if isinstance(body.get("message"), dict) else body
        raw = {**message, "finish_reason": body.get("finish_reason")}
        if "tool_calls" in body and "tool_calls" not in raw:
            raw["tool_calls"] = body["tool_calls"]
        found.append(_with_stop(normalise({**raw, "role": "assistant"}), raw))
    return found


def _documents(value: Any) -> list[tuple[str | None, str]]:
    value = decoded(value)
    items = value if isinstance(value, list) else []
    found = []
    for item in items:
        if isinstance(item, dict):
            text = item.get("content", item.get("text"))
            if text is not None and as_text(text).strip():
                found.append((_text(item.get("id")), as_text(text)))
        elif isinstance(item, str) and item.strip():
            found.append((None, item))
    return found
