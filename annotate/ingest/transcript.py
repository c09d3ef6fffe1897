"""Agent session transcripts: JSON Lines of user/assistant messages, one trace per user turn.

Accepts Claude Code session files ({"type": "user"|"assistant", "message": {...},
"sessionId", "timestamp", ...}; other line types are ignored, as are sidechain lines)
and plain Messages-API lines ({"role", "content"}). A turn starts at a user message
with human text and runs to the next one: request = that text, response = the
assistant's text blocks, context = the turn's tool results (matched to their tool_use
by id). A turn without tool results is kept with an empty context (not judgeable).
Only the current turn is held in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from annotate.ingest.generic import read_jsonl
from annotate.traces import Record, RowError

_SUMMARY_CHARS = 80


def looks_like(first: Any) -> bool:
    """Claude Code lines (any type, with session keys) or a plain {"role", "content"} message."""
    if not isinstance(first, dict) or "trace_id" in first or "response" in first:
        return False
    if isinstance(first.get("type"), str) and {"sessionId", "leafUuid", "uuid"} & set(first):
        return True
    inner = first.get("message")
    message: dict[str, Any] = inner if isinstance(inner, dict) else first
    return message.get("role") in ("user", "assistant") and "content" in message


@dataclass
class _Turn:
    line: int
    number: int
    session: str
    request: str
    timestamp: str | None
    texts: list[str] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)  # tool_use id -> "name: input summary"
    results: list[dict[str, str]] = field(default_factory=list)
    model: str | None = None
    tool_errors: int = 0

    def record(self, agent: str) -> Record | RowError:
        response = "\n\n".join(t for t in self.texts if t.strip())
        if not response:
            return RowError(
                self.line,
                "response",
                "the assistant wrote no text in this turn; nothing to judge",
            )
        data = {
            "trace_id": f"{self.session}:{self.number}",
            "timestamp": self.timestamp,
            "model": self.model,
            "request": self.request,
            "context": self.results,
            "response": response,
            "attributes": {
                "session_id": self.session,
                "turn": self.number,
                "tools_used": sorted({name.split(":")[0] for name in self.tools.values()}),
                "tool_errors": self.tool_errors,
                "agent": agent,
            },
        }
        return Record(self.line, data)


def read_records(fh: IO[bytes]) -> Iterator[Record | RowError]:
    fallback = os.path.splitext(os.path.basename(str(getattr(fh, "name", "session"))))[0]
    turn: _Turn | None = None
    agent = "messages"
    count = 0
    for parsed in read_jsonl(fh):
        if isinstance(parsed, RowError):
            yield parsed
            continue
        number, line = parsed.line, parsed.data
        if not isinstance(line, dict):
            yield RowError(number, "", "must be a JSON object holding one message")
            continue
        if "type" in line and "message" in line:
            agent = "claude-code"
        message = _message(line)
        if message is None:
            continue
        role, content = message.get("role"), _blocks(message.get("content"))
        human = _human_text(content) if role == "user" else ""
        if role == "user" and human:
            if turn is not None:
                yield turn.record(agent)
            count += 1
            session = str(line.get("sessionId") or fallback or "session")
            turn = _Turn(number, count, session, human, line.get("timestamp"))
        elif turn is not None:
            _add_to_turn(turn, role, message, content)
    if turn is not None:
        yield turn.record(agent)


def _message(line: dict[str, Any]) -> dict[str, Any] | None:
    if line.get("isSidechain"):
        return None
    if "type" in line and line["type"] not in ("user", "assistant"):
        return None
    inner = line.get("message")
    message: dict[str, Any] = inner if isinstance(inner, dict) else line
    return message if message.get("role") in ("user", "assistant") else None


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _human_text(blocks: list[dict[str, Any]]) -> str:
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    return "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())


def _add_to_turn(
    turn: _Turn, role: str | None, message: dict[str, Any], blocks: list[dict[str, Any]]
) -> None:
    if role == "assistant":
        turn.model = turn.model or message.get("model")
        for block in blocks:
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                turn.texts.append(block["text"])
            elif block.get("type") == "tool_use":
                turn.tools[str(block.get("id"))] = (
                    f"{block.get('name')}: {_summary(block.get('input'))}"
                )
        return
    for block in blocks:
        if block.get("type") == "tool_result":
            source = turn.tools.get(str(block.get("tool_use_id")), "tool")
            turn.results.append({"source": source, "text": _result_text(block.get("content"))})
            turn.tool_errors += bool(block.get("is_error"))


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else str(content)


def _summary(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        for key in ("file_path", "path", "command", "pattern", "url", "query"):
            if isinstance(tool_input.get(key), str):
                return tool_input[key][:_SUMMARY_CHARS]
        return ", ".join(f"{k}={v}" for k, v in list(tool_input.items())[:3])[:_SUMMARY_CHARS]
    return str(tool_input)[:_SUMMARY_CHARS]
