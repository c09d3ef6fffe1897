"""Provider-shaped requests and responses as the tools record them whole (OpenInference's
input.value / output.value, MLflow's span inputs and outputs, Langfuse's observation input
and output): Anthropic and OpenAI Messages/Chat bodies, bare message lists, or plain text,
normalised to messages. Pure.
"""

from __future__ import annotations

import re
from typing import Any

from annotate.ingest.conventions import LLM, RETRIEVAL, TOOL, SpanView
from annotate.ingest.conventions.messages import Message, as_text, decoded, message_list, normalise

TOOL_STOPS = frozenset({"tool_use", "tool_calls", "tool_call", "function_call"})
# What a tool records when it saved a Python object, not its content (MLflow's autolog of a
# streamed Messages.create records "<anthropic.Stream object at 0x7f...>").
OBJECT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")


def is_object_repr(value: Any) -> bool:
    return isinstance(value, str) and OBJECT_REPR.match(value.strip()) is not None


def request_messages(value: Any) -> list[Message]:
    """The input messages of a request body (its `system` first, as a system message), a
    message list, or a prompt given as text (one user message)."""
    value = decoded(value)
    if isinstance(value, dict) and isinstance(value.get("kwargs"), dict):
        value = value["kwargs"]  # MLflow's autolog of a method call records its arguments so
    if isinstance(value, dict) and "messages" in value:
        system = value.get("system")
        head = [normalise({"role": "system", "content": system})] if system else []
        return head + message_list(value["messages"])
    if isinstance(value, dict) and isinstance(value.get("input"), list | str):
        return request_messages(value["input"])
    if isinstance(value, list):
        return message_list(value)
    if isinstance(value, str) and value.strip():
        return [normalise({"role": "user", "content": value})]
    return []


def response_messages(value: Any) -> list[Message]:
    """The answer of a response body: an Anthropic message, OpenAI choices, one message, a
    message list, or text. A stop for tool use adds a tool call the content may not show."""
    value = decoded(value)
    if isinstance(value, dict) and isinstance(value.get("choices"), list):
        return [_choice(c) for c in value["choices"][:1] if isinstance(c, dict)]
    if isinstance(value, dict) and ("content" in value or "parts" in value):
        message = normalise({**value, "role": value.get("role") or "assistant"})
        if value.get("stop_reason") in TOOL_STOPS or value.get("finish_reason") in TOOL_STOPS:
            message["parts"].append({"type": "tool_call", "id": None, "name": None})
        return [message]
    if isinstance(value, list) and value and all(_is_block(m) for m in value):
        return response_messages({"role": "assistant", "content": value})  # one answer's blocks
    if isinstance(value, list):
        return [normalise({**m, "role": m.get("role") or "assistant"}) for m in _dicts(value)]
    if isinstance(value, str) and value.strip() and not is_object_repr(value):
        return [normalise({"role": "assistant", "content": value})]
    return []


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and "type" in value and "role" not in value


def _choice(choice: dict[str, Any]) -> Message:
    message: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
    normalised = normalise({**message, "role": message.get("role") or "assistant"})
    if choice.get("finish_reason") in TOOL_STOPS:
        normalised["parts"].append({"type": "tool_call", "id": None, "name": None})
    return normalised


def _dicts(value: list[Any]) -> list[dict[str, Any]]:
    return [m for m in value if isinstance(m, dict)]


def response_id_of(value: Any) -> str | None:
    """The provider's id of a response body (Anthropic msg_..., OpenAI chatcmpl-...)."""
    value = decoded(value)
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


def model_of(value: Any) -> str | None:
    value = decoded(value)
    if isinstance(value, dict) and isinstance(value.get("kwargs"), dict):
        value = value["kwargs"]
    model = value.get("model") if isinstance(value, dict) else None
    return model if isinstance(model, str) and model else None


def body_view(found: SpanView, inputs: Any, outputs: Any) -> SpanView:
    """A span whose convention records its inputs and outputs whole (MLflow, Langfuse): a
    call's request and response bodies, a tool's result, a retrieval's documents."""
    if found.kind == LLM:
        found.inputs = request_messages(inputs)
        found.outputs = response_messages(outputs)
        found.response_id = response_id_of(outputs)
    elif found.kind == TOOL:
        found.tool_result = None if outputs is None else as_text(outputs)
    elif found.kind == RETRIEVAL:
        found.documents = documents_of(outputs)
    return found


def documents_of(value: Any) -> list[tuple[str | None, str]]:
    """Retrieved documents in the shapes tools record: LangChain/MLflow Documents
    ({page_content, metadata, id}), {text|content, id|source}, or plain strings."""
    value = decoded(value)
    if isinstance(value, dict):
        value = value.get("documents", [value])
    found = []
    for item in value if isinstance(value, list) else []:
        text: Any
        name: Any
        if isinstance(item, str):
            text, name = item, None
        elif isinstance(item, dict):
            text = item.get("page_content", item.get("text", item.get("content")))
            metadata: dict[str, Any] = (
                item["metadata"] if isinstance(item.get("metadata"), dict) else {}
            )
            name = item.get("id") or metadata.get("doc_uri") or item.get("source")
        else:
            continue
        if text is not None and as_text(text).strip():
            found.append((str(name) if name not in (None, "") else None, as_text(text)))
    return found
