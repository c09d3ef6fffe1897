"""Agent session transcripts (JSON Lines of user/assistant messages): TO BE WRITTEN."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from annotate.traces import Record, RowError


def looks_like(first: Any) -> bool:
    if not isinstance(first, dict):
        return False
    message = first.get("message") if isinstance(first.get("message"), dict) else first
    return message.get("role") in ("user", "assistant") and "trace_id" not in first


def read_records(fh: IO[bytes]) -> Iterator[Record | RowError]:
    raise NotImplementedError
