"""Agent session transcripts (JSON Lines of user/assistant messages) read as one trace per turn.

Owns the turn rules for Claude Code session files and plain Messages-API lines; it
only yields Records in the generic trace shape, validation is annotate.traces' job.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import IO, Any

from annotate.ingest.generic import decode_line, parse_json_line
from annotate.traces import Record, RowError, describe_type, to_json_bytes, unexpected_error

ROLES = ("user", "assistant")
# Claude Code line types that mark a session file; only user and assistant lines are read.
CLAUDE_CODE_TYPES = ("summary", "system", "file-history-snapshot", "queue-operation", *ROLES)
_SESSION_KEYS = ("sessionId", "leafUuid", "uuid", "parentUuid", "messageId")
# Lines Claude Code writes itself: sub-agent threads, injected notices, compaction
# summaries, API errors shown as assistant text. None of them is a human turn or a reply.
_SKIPPED_FLAGS = ("isSidechain", "isMeta", "isCompactSummary", "isApiErrorMessage")
# User text that is a UI event, not a request: it continues the turn it appears in.
_NOT_REQUESTS = ("[Request interrupted by user", "<local-command-")
_SUMMARY_KEYS = ("file_path", "notebook_path", "path", "command", "pattern", "url", "query")
_SUMMARY_CHARS = 80
_ONE_MESSAGE = 'one message a line, such as {"role": "user", "content": "..."}'

Message = tuple[str, list[dict[str, Any]], dict[str, Any]]  # role, content blocks, message


def looks_like(first: Any) -> bool:
    """A Claude Code line of a known type, or a {"role", "content"} message; never a trace row."""
    if not isinstance(first, dict) or "trace_id" in first or "response" in first:
        return False
    if first.get("type") in CLAUDE_CODE_TYPES and any(key in first for key in _SESSION_KEYS):
        return True
    inner = first.get("message")
    message = inner if isinstance(inner, dict) else first
    return message.get("role") in ROLES and "content" in message


@dataclass
class _Turn:
    """One user request and everything up to the next one; the only state held while reading."""

    line: int
    number: int
    session: str
    agent: str
    request: str
    timestamp: Any
    texts: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # tool_use id -> "Read: path"
    tools_used: list[str] = field(default_factory=list)
    context: list[dict[str, str]] = field(default_factory=list)
    tool_errors: int = 0
    model: str | None = None

    def add_reply(self, message: dict[str, Any], blocks: list[dict[str, Any]]) -> None:
        model = message.get("model")
        if self.model is None and isinstance(model, str) and model != "<synthetic>":
            self.model = model
        for block in blocks:
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.texts.append(block["text"])
            elif block.get("type") == "tool_use":
                self._add_tool_use(block)

    def _add_tool_use(self, block: dict[str, Any]) -> None:
        name = str(block.get("name") or "tool")
        summary = _summarise(block.get("input"))
        self.sources[str(block.get("id"))] = f"{name}: {summary}" if summary else name
        if name not in self.tools_used:
            self.tools_used.append(name)

    def add_results(self, blocks: list[dict[str, Any]]) -> None:
        for block in blocks:
            if block.get("type") != "tool_result":
                continue
            use_id = str(block.get("tool_use_id"))
            source = self.sources.get(use_id, f"unknown tool ({use_id})")
            self.context.append({"source": source, "text": _result_text(block.get("content"))})
            self.tool_errors += block.get("is_error") is True

    def finish(self) -> Record | RowError:
        response = "\n\n".join(text.strip() for text in self.texts if text.strip())
        if not response:
            return RowError(
                self.line,
                "response",
                "is empty: the assistant wrote no text in this turn; nothing to judge, "
                "so the turn is skipped",
            )
        data: dict[str, Any] = {
            "trace_id": f"{self.session}:{self.number}",
            "request": self.request,
            "context": self.context,
            "response": response,
            "attributes": self._attributes(),
        }
        if self.timestamp is not None:
            data["timestamp"] = self.timestamp
        if self.model:
            data["model"] = self.model
        return Record(self.line, data)

    def _attributes(self) -> dict[str, Any]:
        return {
            "session_id": self.session,
            "turn": self.number,
            "tools_used": self.tools_used,
            "tool_errors": self.tool_errors,
            "agent": self.agent,
        }


def read_records(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """Stream the transcript; a turn is yielded once the next one starts (or the file ends)."""
    turn: _Turn | None = None
    count = 0
    for item in _messages(fh):
        if isinstance(item, RowError):
            yield item
            continue
        number, line, (role, blocks, message) = item
        if turn is not None and role == "user":
            turn.add_results(blocks)  # before a new request: they answer the previous turn
        elif turn is not None:
            turn.add_reply(message, blocks)
        request = _request_text(blocks) if role == "user" else ""
        if request:
            if turn is not None:
                yield turn.finish()
            count += 1
            turn = _start_turn(line, number, count, request, _file_stem(fh))
    if turn is not None:
        yield turn.finish()


def _messages(fh: IO[bytes]) -> Iterator[tuple[int, dict[str, Any], Message] | RowError]:
    """Every message line with its number and raw line; ignored lines are dropped."""
    for number, raw in enumerate(fh, start=1):
        line = _parse_line(raw, number)
        if not isinstance(line, dict):
            if line is not None:
                yield line
            continue
        try:
            message = _message(line, number)
        except Exception as exc:  # a bug must cost one line, never the file
            message = unexpected_error(Record(number, line), exc)
        if isinstance(message, RowError):
            yield message
        elif message is not None:
            yield number, line, message


def _start_turn(
    line: dict[str, Any], number: int, count: int, request: str, fallback: str
) -> _Turn:
    session = line.get("sessionId")
    return _Turn(
        line=number,
        number=count,
        session=session if isinstance(session, str) and session.strip() else fallback,
        agent="claude-code" if isinstance(line.get("message"), dict) else "messages",
        request=request,
        timestamp=line.get("timestamp"),
    )


def _file_stem(fh: IO[bytes]) -> str:
    name = getattr(fh, "name", None)
    stem = PurePath(name).stem if isinstance(name, str) else ""
    return stem or "session"


def _parse_line(raw: bytes, number: int) -> dict[str, Any] | RowError | None:
    text = decode_line(raw, number)
    if isinstance(text, RowError) or not text.strip():
        return text if isinstance(text, RowError) else None
    parsed = parse_json_line(text.rstrip("\r\n"), number)
    if isinstance(parsed, RowError) or isinstance(parsed.data, dict):
        return parsed if isinstance(parsed, RowError) else parsed.data
    return RowError(
        number, "", f"must be a JSON object, got {describe_type(parsed.data)}; write {_ONE_MESSAGE}"
    )


def _message(line: dict[str, Any], number: int) -> Message | RowError | None:
    """The line's (role, blocks, message), None for lines to ignore, or why it is unusable."""
    if any(line.get(flag) is True for flag in _SKIPPED_FLAGS):
        return None
    inner = line.get("message")
    if isinstance(inner, dict):
        message = inner
    elif line.get("type") in ROLES:
        return RowError(
            number,
            "message",
            f'must be an object with role and content on a "{line["type"]}" line, '
            f"got {describe_type(inner)}; the line was skipped",
        )
    elif "role" in line:
        message = line
    else:
        return None if "type" in line else _not_a_message(number)
    role = message.get("role")
    if role in ROLES:
        return role, _blocks(message.get("content")), message
    if role == "system":  # a system prompt: nothing a reviewer judges
        return None
    got = f'"{role}"' if isinstance(role, str) else describe_type(role)
    return RowError(
        number, "role", f'must be "user" or "assistant", got {got}; write {_ONE_MESSAGE}'
    )


def _not_a_message(number: int) -> RowError:
    return RowError(
        number,
        "role",
        f'is missing: the line is neither a message nor a Claude Code line with "type"; '
        f"write {_ONE_MESSAGE}",
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _request_text(blocks: list[dict[str, Any]]) -> str:
    """The human text of a user message; empty when it only returns tool results."""
    texts = (block.get("text") for block in blocks if block.get("type") == "text")
    kept = [
        text.strip()
        for text in texts
        if isinstance(text, str) and text.strip() and not text.lstrip().startswith(_NOT_REQUESTS)
    ]
    return "\n\n".join(kept)


def _result_text(content: Any) -> str:
    """A tool_result's content: a string, or its text blocks (images carry nothing to quote)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = (block.get("text") for block in content if isinstance(block, dict))
    return "\n\n".join(text for text in texts if isinstance(text, str))


def _summarise(tool_input: Any) -> str:
    """What a tool call was about, in one short line: its path, command or query."""
    if isinstance(tool_input, dict):
        keyed = (tool_input.get(key) for key in _SUMMARY_KEYS)
        value = next((v for v in keyed if isinstance(v, str) and v.strip()), None)
        if value is None:
            value = ", ".join(f"{key}={_plain(v)}" for key, v in tool_input.items())
    else:
        value = "" if tool_input is None else str(tool_input)
    lines = value.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if len(first) <= _SUMMARY_CHARS else first[: _SUMMARY_CHARS - 1] + "…"


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else to_json_bytes(value).decode()
