"""GenAI semantic-convention attributes of OTLP spans: messages, tool and retrieval results, evaluations."""

from __future__ import annotations

import json
import re
from typing import Any

EVALUATION = "gen_ai.evaluation.result"
LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
NOT_LLM_OPERATIONS = ("execute_tool", "embeddings", "retrieval", "create_agent", "invoke_agent")
_RETRIEVAL_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(content|id)$")
_INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(role|content)$")


def is_llm_span(attributes: dict[str, Any], name: str) -> bool:
    operation = attributes.get("gen_ai.operation.name")
    if operation in LLM_OPERATIONS:
        return True
    if operation in NOT_LLM_OPERATIONS:
        return False
    return any(
        k in attributes for k in ("gen_ai.request.model", "gen_ai.system", "gen_ai.provider.name")
    ) and (
        response_of(attributes) is not None
        or "gen_ai.input.messages" in attributes
        or "gen_ai.prompt" in attributes
    )


def _messages(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, dict):
        value = [value]
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else None


def _text(message: dict[str, Any]) -> str:
    """The text of a message: semconv `parts` ({type: text, content}) or a `content` string/list."""
    parts = message.get("parts")
    if isinstance(parts, list):
        return "\n".join(
            str(p.get("content", ""))
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text"
        )
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(
            str(c.get("text", ""))
            for c in content
            if isinstance(c, dict) and c.get("type") == "text"
        )
    return "" if content is None else str(content)


def _indexed(attributes: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _INDEXED.match(key)
        if match and match.group(1) == kind:
            found.setdefault(int(match.group(2)), {})[match.group(3)] = value
    return [found[i] for i in sorted(found)]


def request_of(attributes: dict[str, Any]) -> str | None:
    """The last user message the model saw."""
    messages = _messages(attributes.get("gen_ai.input.messages")) or _indexed(attributes, "prompt")
    if not messages and isinstance(attributes.get("gen_ai.prompt"), str):
        parsed = _messages(attributes["gen_ai.prompt"])
        messages = parsed or [{"role": "user", "content": attributes["gen_ai.prompt"]}]
    users = [_text(m) for m in messages if m.get("role", "user") == "user" and _text(m)]
    return users[-1] if users else None


def response_of(attributes: dict[str, Any]) -> str | None:
    messages = _messages(attributes.get("gen_ai.output.messages")) or _indexed(
        attributes, "completion"
    )
    if not messages and isinstance(attributes.get("gen_ai.completion"), str):
        parsed = _messages(attributes["gen_ai.completion"])
        messages = parsed or [{"role": "assistant", "content": attributes["gen_ai.completion"]}]
    texts = [_text(m) for m in messages if m.get("role", "assistant") == "assistant"]
    text = "\n".join(t for t in texts if t)
    return text or None


def _tool_responses(attributes: dict[str, Any]) -> list[dict[str, str]]:
    items = []
    for message in _messages(attributes.get("gen_ai.input.messages")) or []:
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                response = part.get("response")
                text = (
                    response
                    if isinstance(response, str)
                    else json.dumps(response, ensure_ascii=False)
                )
                items.append(
                    {"source": f"tool_call_response {part.get('id', '')}".strip(), "text": text}
                )
    return items


def _retrieved(span: Any) -> list[dict[str, str]]:
    attributes = span.attributes
    docs: dict[int, dict[str, str]] = {}
    for key, value in attributes.items():
        match = _RETRIEVAL_DOC.match(key)
        if match:
            docs.setdefault(int(match.group(1)), {})[match.group(2)] = str(value)
    items = [
        {"source": d.get("id") or f"{span.name} #{i}", "text": d["content"]}
        for i, d in sorted(docs.items())
        if "content" in d
    ]
    listed = attributes.get("gen_ai.retrieval.documents")
    for i, doc in enumerate(_messages(listed) or []):
        text = doc.get("content") or doc.get("text")
        if text:
            items.append({"source": str(doc.get("id") or f"{span.name} #{i}"), "text": str(text)})
    return items


def context_of(span: Any, spans: list[Any]) -> list[dict[str, str]]:
    """Retrieval and tool results in the same OTel trace, in start order, then the span's own."""
    items: list[dict[str, str]] = []
    for other in sorted(spans, key=lambda s: s.start):
        attributes = other.attributes
        if (
            attributes.get("gen_ai.operation.name") == "execute_tool"
            and "gen_ai.tool.call.result" in attributes
        ):
            result = attributes["gen_ai.tool.call.result"]
            text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
            items.append(
                {"source": str(attributes.get("gen_ai.tool.name") or other.name), "text": text}
            )
        else:
            items.extend(_retrieved(other))
    return items + _tool_responses(span.attributes)


def verdict_of(evaluation: dict[str, Any]) -> dict[str, Any] | None:
    label = evaluation.get("gen_ai.evaluation.score.label")
    if not label:
        return None
    score = evaluation.get("gen_ai.evaluation.score.value")
    return {
        "judge": evaluation.get("gen_ai.evaluation.name") or "otel-evaluation",
        "level": "response",
        "label": str(label),
        "score": float(score) if isinstance(score, int | float) else None,
        "explanation": evaluation.get("gen_ai.evaluation.explanation"),
    }
