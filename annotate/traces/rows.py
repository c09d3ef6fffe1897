"""The Trace row that every input format becomes, and the RowError that names a bad field.

Pure data: no I/O, no store, no streamlit. `annotate.traces.parse` builds these from records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Annotated, Any

import msgspec
import orjson

from annotate.traces.limits import INT32_MAX, MAX_NAME_CHARS

# The parts of a trace are msgspec Structs, not dataclasses: a row holds a dozen of them, a
# frozen dataclass costs ~10x a Struct to make, and a JSON line of the usual shape decodes
# straight into them (annotate.traces.decoded). The constraints below matter to that decoding
# only (a value outside them sends the row to parse.py's checks); making one checks nothing.
Name = Annotated[str, msgspec.Meta(max_length=MAX_NAME_CHARS)]
Offset = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
Given = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_CHARS)]  # "": parse.py's


class ContextItem(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    text: str
    source: Name | None = None


class Claim(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    text: str
    start: Offset | None = None
    end: Offset | None = None


class JudgeVerdict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    judge: Given
    level: str
    label: Given
    claim: Offset | None = None
    score: float | None = None
    explanation: str | None = None
    ratings: tuple[tuple[str, float], ...] = ()  # response-level criteria: (name, score)


@dataclass(frozen=True)
class Trace:
    trace_id: str
    response: str
    contexts: tuple[ContextItem, ...]
    request: str | None = None
    timestamp: datetime | None = None
    feature: str | None = None
    risk_category: str | None = None
    model: str | None = None
    claims: tuple[Claim, ...] = ()
    judge: tuple[JudgeVerdict, ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    warnings: tuple[RowError, ...] = field(default=(), compare=False)

    @property
    def is_judgeable(self) -> bool:
        """A trace with no context text has nothing to check its claims against."""
        return any(item.text and not item.text.isspace() for item in self.contexts)

    @cached_property
    def attributes_json(self) -> bytes:
        """The attributes as canonical JSON: stored as they are, and hashed with the content."""
        return to_json_bytes(self.attributes)

    @cached_property
    def content_hash(self) -> str:
        """Hash of everything but the source line, to tell a duplicate from a conflict."""
        content = [
            self.trace_id,
            self.response,
            [[item.text, item.source] for item in self.contexts],
            self.request,
            self.timestamp.isoformat() if self.timestamp else None,
            self.feature,
            self.risk_category,
            self.model,
            [[claim.text, claim.start, claim.end] for claim in self.claims],
            [
                [v.judge, v.level, v.label, v.claim, v.score, v.explanation]
                + ([[list(r) for r in v.ratings]] if v.ratings else [])  # old hashes kept
                for v in self.judge
            ],
        ]
        # the JSON of content + [attributes], with the attributes' JSON made once (it is stored)
        spliced = to_json_bytes(content)[:-1] + b"," + self.attributes_json + b"]"
        return hashlib.sha256(spliced).hexdigest()


def to_json_bytes(value: Any) -> bytes:
    """Canonical JSON (sorted keys); values JSON lacks (bytes, Decimal) become strings."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)


@dataclass(frozen=True)
class Record:
    """One raw row as a reader found it: its position and its fields."""

    line: int
    data: Any
    unit: str = "line"
    # or "evaluation": a verdict for a span imported earlier (OTLP); or "note": a RowError
    # (`data`) a reader reports about a row it kept, a warning
    kind: str = "trace"
    # a table's columns (CSV header, Parquet schema): one that `data` lacks was an empty cell
    columns: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RowError:
    line: int
    field: str
    message: str
    unit: str = "line"

    def __post_init__(self) -> None:
        # names and messages quote the row; they must be storable and printable text themselves
        object.__setattr__(self, "field", printable(self.field))
        object.__setattr__(self, "message", printable(self.message))

    def __str__(self) -> str:
        where = f"{self.unit} {self.line}"
        return (
            f'{where}: "{self.field}" {self.message}' if self.field else f"{where}: {self.message}"
        )

    def as_json(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


def shown(value: Any, limit: int = 60) -> str:
    """A value quoted in a message, cut to `limit` characters so a huge one stays readable."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str) -> str:
    """Text with lone surrogates and NUL characters written as escapes."""
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def describe_type(value: Any) -> str:
    """Name a JSON value's type the way a user reads it in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def unexpected_error(record: Record, exc: BaseException) -> RowError:
    return RowError(
        record.line,
        "",
        f"could not be checked: {type(exc).__name__}: {str(exc)[:200]}. The row was skipped; "
        "this is a bug in annotate, please report it with this row",
        record.unit,
    )


class FieldInvalid(Exception):
    """One field of a row is wrong: parse.py collects these into the row's errors."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
