"""What a model call was given as source material, by where it came from: retrieved
documents, tool results, `document` content blocks, and the prompt itself (system
instructions, and the user's material other than the final question). Also the call's
request (the last user message as sent) and answer. Pure, on normalised messages
(annotate.ingest.conventions.messages).

Context kinds, in `--context` order: retrieval, tools, documents, prompt. The prompt counts
only where the call has no context of the other chosen kinds: it is the source material of a
call that was given none separately (documents pasted into the message or the system prompt).
"""

from __future__ import annotations

from collections.abc import Iterable

from annotate.errors import UsageError
from annotate.ingest.conventions.messages import Message, has_tool_call, text_of

CONTEXT_KINDS = ("retrieval", "tools", "documents", "prompt")
ALL_CONTEXT = frozenset(CONTEXT_KINDS)
Item = dict[str, str]


def parse_context_kinds(value: str | None) -> frozenset[str]:
    """`--context retrieval,tools`: the kinds named, checked; None or "all" is every kind."""
    if value is None or value.strip().lower() in ("", "all"):
        return ALL_CONTEXT
    kinds = [part.strip().lower() for part in value.split(",") if part.strip()]
    unknown = [kind for kind in kinds if kind not in ALL_CONTEXT]
    if unknown or not kinds:
        raise UsageError(
            f"--context {value!r}: {', '.join(map(repr, unknown)) or 'nothing'} is not a kind "
            f"of context; name one or more of {','.join(CONTEXT_KINDS)} (or all)"
        )
    return frozenset(kinds)


def request_of(inputs: list[Message]) -> str | None:
    """The text of the last user message that has text, as it was sent."""
    texts = [text_of(m) for m in inputs if m["role"] == "user" and text_of(m)]
    return texts[-1] if texts else None


def answer_of(outputs: list[Message]) -> str | None:
    """The text of the first assistant output; None when it has none."""
    for message in outputs:
        if message["role"] in ("assistant", "model") and text_of(message):
            return text_of(message)
    return None


def is_agent_step(outputs: list[Message]) -> bool:
    """An output that calls tools is a step on the way, not the answer: text before a tool
    call ("Let me look that up.") is a preamble."""
    return any(has_tool_call(m) for m in outputs)


def message_context(inputs: list[Message]) -> dict[str, list[Item]]:
    """The context a call's own messages carry, by kind."""
    names = _tool_names(inputs)
    found: dict[str, list[Item]] = {"tools": [], "documents": [], "prompt": []}
    documents = 0
    for message in inputs:
        for part in message["parts"]:
            if part["type"] == "tool_call_response" and part["response"].strip():
                name = part["name"] or names.get(part["id"]) or part["id"] or "result"
                found["tools"].append(_item(f"tool {name}", part["response"]))
            elif part["type"] == "document":
                documents += 1
                title = f": {part['title']}" if part["title"] else ""
                found["documents"].append(_item(f"document {documents}{title}", part["content"]))
    found["prompt"] = _prompt(inputs)
    return found


def _tool_names(inputs: list[Message]) -> dict[str | None, str]:
    return {
        part["id"]: part["name"]
        for message in inputs
        for part in message["parts"]
        if part["type"] == "tool_call" and part["id"] and part["name"]
    }


def _prompt(inputs: list[Message]) -> list[Item]:
    """System instructions, then each user message's material: all of its text but the final
    question, which is the last message's last text part or, in one part, its last paragraph."""
    items = [_item("system", text_of(m)) for m in inputs if m["role"] == "system" and text_of(m)]
    users = [
        (number, m)
        for number, m in enumerate((m for m in inputs if m["role"] != "system"), start=1)
        if m["role"] == "user" and text_of(m)
    ]
    for position, (number, message) in enumerate(users):
        texts = [p["content"] for p in message["parts"] if p["type"] == "text"]
        if position == len(users) - 1:
            texts = _without_question(texts)
        material = "\n".join(texts).strip()
        if material:
            items.append(_item(f"message {number}", material))
    return items


def _without_question(texts: list[str]) -> list[str]:
    if len(texts) > 1:
        return texts[:-1]
    head, _, _question = texts[0].strip().rpartition("\n\n")
    return [head] if head.strip() else []


def _item(source: str, text: str) -> Item:
    return {"source": source, "text": text}


def chosen(candidates: dict[str, list[Item]], kinds: frozenset[str]) -> tuple[list[Item], str]:
    """The context kept under `kinds`, duplicates once, and where it came from ("retrieval,
    tools"; "none"). The prompt only when nothing else chosen was found."""
    kept = {kind: candidates.get(kind, []) for kind in CONTEXT_KINDS if kind in kinds}
    if any(kept.get(kind) for kind in ("retrieval", "tools", "documents")):
        kept.pop("prompt", None)
    items = _unique(item for kind in CONTEXT_KINDS for item in kept.get(kind, []))
    origin = ",".join(kind for kind in CONTEXT_KINDS if kept.get(kind))
    return items, origin or "none"


def _unique(items: Iterable[Item]) -> list[Item]:
    seen: set[str] = set()
    unique = []
    for item in items:
        if item["text"] not in seen:
            seen.add(item["text"])
            unique.append(item)
    return unique
