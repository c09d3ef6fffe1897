"""Chat messages in every shape the conventions carry, normalised to one: a message is
{"role": str, "parts": [part, ...]}, a part one of
  {"type": "text", "content": str}
  {"type": "document", "title": str | None, "content": str}
  {"type": "tool_call", "id": str | None, "name": str | None}
  {"type": "tool_call_response", "id": str | None, "name": str | None, "response": str}
(the GenAI semantic conventions' parts). Reads GenAI `parts`, Anthropic content blocks
(text, document, tool_use, tool_result), OpenAI messages (content parts, tool_calls, role
"tool"), and content given as JSON text. Pure: no spans, ids or files here.
"""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]
Part = dict[str, Any]


def decoded(value: Any) -> Any:
    """JSON text decoded; anything else (or text that is not JSON) as it came."""
    if not isinstance(value, str) or value[:1] not in ("[", "{", '"'):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def as_text(value: Any) -> str:
    """A value shown to a reviewer: text as it is, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def message_list(value: Any) -> list[Message]:
    """A list of messages (or one message) given as JSON text or structured, normalised."""
    value = decoded(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    return [normalise(m) for m in value if isinstance(m, dict)]


def normalise(message: dict[str, Any]) -> Message:
    role = message.get("role")
    role = role if isinstance(role, str) and role else "user"
    if isinstance(message.get("parts"), list):
        parts = [p for p in (_part(raw) for raw in message["parts"]) if p is not None]
    else:
        parts = _content_parts(message.get("content"))
    parts += _openai_tool_calls(message)
    if role == "tool" and not any(p["type"] == "tool_call_response" for p in parts):
        response = "\n".join(p["content"] for p in parts if p["type"] == "text")
        name = message.get("name")
        parts = [_response(message.get("tool_call_id"), name, response)]
    return {"role": role, "parts": parts}


def _content_parts(content: Any) -> list[Part]:
    content = decoded(content) if isinstance(content, str) and content[:2] == "[{" else content
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    return [p for p in (_part(raw) for raw in content) if p is not None]


def _part(raw: Any) -> Part | None:
    if isinstance(raw, str):
        return {"type": "text", "content": raw} if raw else None
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if kind in ("text", "input_text", "output_text"):
        text = raw.get("content") if isinstance(raw.get("content"), str) else raw.get("text")
        block = _block_as_text(text)
        if block is not None:
            return _part(block)
        return {"type": "text", "content": text} if isinstance(text, str) and text else None
    if kind == "document":
        return _document(raw)
    if kind in ("tool_call", "tool_use", "function_call"):
        return {"type": "tool_call", "id": raw.get("id"), "name": raw.get("name")}
    if kind in ("tool_call_response", "tool_result", "function_call_output"):
        result = raw.get("response", raw.get("result", raw.get("content", raw.get("output"))))
        call_id = raw.get("id", raw.get("tool_use_id", raw.get("call_id")))
        return _response(call_id, raw.get("name"), _flattened(result))
    return None


BLOCKS_AS_TEXT = frozenset({"document", "tool_use", "tool_result"})


def _block_as_text(text: Any) -> dict[str, Any] | None:
    """A content block some writers serialise into a text part (MLflow's GenAI semconv
    export writes an Anthropic document block so): the block, else None."""
    if not isinstance(text, str) or not text.startswith('{"type": "'):
        return None
    block = decoded(text)
    return block if isinstance(block, dict) and block.get("type") in BLOCKS_AS_TEXT else None


def _document(raw: dict[str, Any]) -> Part | None:
    """An Anthropic document block: its text source, or the text blocks of a content source."""
    source = raw.get("source")
    text: Any = raw.get("content") if isinstance(raw.get("content"), str) else None
    if isinstance(source, dict):
        if source.get("type") == "text":
            text = source.get("data")
        elif source.get("type") == "content":
            text = _flattened(source.get("content"))
    if not isinstance(text, str) or not text:
        return None
    title = raw.get("title")
    return {"type": "document", "title": title if isinstance(title, str) else None, "content": text}


def _flattened(result: Any) -> str:
    """A tool result's content: text, a list of text blocks, or any JSON value."""
    result = decoded(result)
    if isinstance(result, list) and all(isinstance(p, dict) and "type" in p for p in result):
        texts = [p.get("text") or p.get("content") for p in result if p.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))
    return as_text(result)


def _response(call_id: Any, name: Any, response: str) -> Part:
    return {
        "type": "tool_call_response",
        "id": call_id if isinstance(call_id, str) else None,
        "name": name if isinstance(name, str) else None,
        "response": response,
    }


def _openai_tool_calls(message: dict[str, Any]) -> list[Part]:
    calls = message.get("tool_calls")
    parts = []
    for call in decoded(calls) if isinstance(decoded(calls), list) else []:
        if isinstance(call, dict):
            function: dict[str, Any] = (
                call["function"] if isinstance(call.get("function"), dict) else {}
            )
            parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name")})
    flat = sorted(k for k in message if k.startswith("tool_calls.") and k.endswith(".name"))
    for key in flat:  # OpenLLMetry's flattened tool_calls.0.name / tool_calls.0.id
        call_id = message.get(key[: -len("name")] + "id")
        parts.append({"type": "tool_call", "id": call_id, "name": message[key]})
    return parts


def text_of(message: Message) -> str:
    return "\n".join(p["content"] for p in message["parts"] if p["type"] == "text")


def has_tool_call(message: Message) -> bool:
    return any(p["type"] == "tool_call" for p in message["parts"])


def unflatten(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened indexed attributes (`prefix.0.role`, `prefix.0.content`, `prefix.1...`) as a
    list of dicts in index order; deeper keys stay dotted (`tool_calls.0.name`)."""
    found: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if key.startswith(start):
            index, _, rest = key[len(start) :].partition(".")
            if index.isdigit() and rest:
                found.setdefault(int(index), {})[rest] = value
    return [found[i] for i in sorted(found)]
