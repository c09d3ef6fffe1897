"""OpenInference (Arize Phoenix's convention): openinference.span.kind LLM / RETRIEVER / TOOL
(CHAIN, AGENT and the rest carry no call of their own); a call's messages from input.value /
output.value when they hold the provider's request and response bodies (they keep document
blocks and the system prompt), else llm.input_messages.N.message.* /
llm.output_messages.N.message.*; retrieval.documents.N.document.{id,content}; tool.name and
the tool span's output.value; llm.model_name.
"""

from __future__ import annotations

from typing import Any

from annotate.ingest.conventions import LLM, OTHER, RETRIEVAL, TOOL, SpanView
from annotate.ingest.conventions.messages import Message, as_text, decoded, normalise, unflatten
from annotate.ingest.conventions.provider import request_messages, response_id_of, response_messages

KIND = "openinference.span.kind"
KINDS = {"LLM": LLM, "RETRIEVER": RETRIEVAL, "TOOL": TOOL}


def follows(attributes: dict[str, Any]) -> bool:
    return KIND in attributes


def view(attributes: dict[str, Any]) -> SpanView:
    kind = KINDS.get(str(attributes.get(KIND)).upper(), OTHER)
    found = SpanView(kind, "openinference", model=_text(attributes.get("llm.model_name")))
    if kind == LLM:
        found.inputs = _request(attributes) or _flat(attributes, "llm.input_messages")
        found.outputs = _response(attributes) or _flat(attributes, "llm.output_messages")
        found.response_id = response_id_of(attributes.get("output.value"))
    elif kind == TOOL:
        found.tool_name = _text(attributes.get("tool.name"))
        result = attributes.get("output.value")
        found.tool_result = None if result is None else as_text(decoded(result))
    found.documents = [
        (_text(doc.get("document.id")), as_text(doc.get("document.content")))
        for doc in unflatten(attributes, "retrieval.documents")
        if as_text(doc.get("document.content")).strip()
    ]
    return found


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int) and str(value) else None


def _request(attributes: dict[str, Any]) -> list[Message]:
    value = decoded(attributes.get("input.value"))
    return request_messages(value) if isinstance(value, dict) else []


def _response(attributes: dict[str, Any]) -> list[Message]:
    value = decoded(attributes.get("output.value"))
    return response_messages(value) if isinstance(value, dict) else []


def _flat(attributes: dict[str, Any], prefix: str) -> list[Message]:
    """llm.input_messages.0.message.role / .content / .contents.N.message_content.* /
    .tool_calls.N.tool_call.{id,function.name} / .tool_call_id, as normalised messages."""
    found = []
    for raw in unflatten(attributes, prefix):
        contents = [
            {"type": c.get("message_content.type"), "text": c.get("message_content.text")}
            for c in unflatten(raw, "message.contents")
        ]
        calls = [
            {
                "type": "tool_call",
                "id": c.get("tool_call.id"),
                "name": c.get("tool_call.function.name"),
            }
            for c in unflatten(raw, "message.tool_calls")
        ]
        message = {
            "role": raw.get("message.role"),
            "content": contents or raw.get("message.content"),
            "tool_call_id": raw.get("message.tool_call_id"),
            "name": raw.get("message.name"),
        }
        normalised = normalise(message)
        normalised["parts"] += [normalise({"content": [c]})["parts"][0] for c in calls]
        found.append(normalised)
    return found
