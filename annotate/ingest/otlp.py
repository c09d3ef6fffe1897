"""OTLP JSON traces (file-exporter JSON Lines of resourceSpans, or one document): TO BE WRITTEN."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from annotate.traces import Record, RowError


def looks_like(first: Any) -> bool:
    return isinstance(first, dict) and ("resourceSpans" in first or "resourceLogs" in first)


def read_records(fh: IO[bytes]) -> Iterator[Record | RowError]:
    raise NotImplementedError
