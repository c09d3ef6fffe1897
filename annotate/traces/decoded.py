"""A JSON line of the usual shape -> a Trace, decoded and type-checked in C (msgspec).

`plain_trace` returns the Trace only when `parse_record` of the same line would return the
same Trace with no warning, and None otherwise: the caller then reads the line the full way
(orjson, then parse.py's checks), which names every problem. So no row's outcome, message or
content hash differs from the full path's (tests/test_import_decoded.py compares them row for
row); only the common row is faster. Pure: no I/O.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any

import msgspec

from annotate.traces.limits import MAX_TEXT_CHARS, check_json_value
from annotate.traces.limits import to_utc as _to_utc
from annotate.traces.rows import Claim, ContextItem, JudgeVerdict, Name, Trace

# An attribute's value the store certainly takes (plain.plain_attribute's bounds); a list or an
# object is checked whole by check_json_value.
_Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_Exact = Annotated[float, msgspec.Meta(gt=-(2.0**63), lt=2.0**63)]
_Attribute = str | _Int64 | _Exact | bool | None | list[Any] | dict[str, Any]


class _Row(msgspec.Struct, forbid_unknown_fields=True):  # any other key: an attribute
    trace_id: Name
    response: str
    context: str | list[str | ContextItem]
    request: str | None = None
    timestamp: str | None = None
    feature: Name | None = None
    risk_category: Name | None = None
    model: Name | None = None
    claims: list[str | Claim] | None = None
    judge: list[JudgeVerdict] | JudgeVerdict | None = None
    attributes: dict[Name, _Attribute] | None = None


_DECODER = msgspec.json.Decoder(_Row)
_ESCAPED_NUL = b"\\u0000"
_RATINGS = b'"ratings"'  # a verdict's ratings would decode from pairs, which parse.py refuses


class _NotPlain(Exception):
    """The row needs the full checks (which may still accept it)."""


def plain_trace(raw: bytes, line: int) -> Trace | None:
    """The Trace of a JSON line every check certainly accepts unchanged, else None.

    Text limits: a line shorter than MAX_TEXT_CHARS bytes holds no longer string; msgspec
    refuses invalid UTF-8 and lone surrogates; a NUL can only arrive escaped."""
    if len(raw) > MAX_TEXT_CHARS or _ESCAPED_NUL in raw or _RATINGS in raw:
        return None
    try:
        row = _DECODER.decode(raw)
        return _trace(row, line)
    except Exception:  # whatever this path cannot take, the full path judges (and names)
        return None


def _trace(row: _Row, line: int) -> Trace:
    if not row.trace_id.strip():
        raise _NotPlain
    claims = _claims(row.claims, row.response) if row.claims else ()
    judge = _verdicts(row.judge, len(claims)) if row.judge is not None else ()
    trace = Trace(
        trace_id=row.trace_id,
        response=row.response,
        contexts=_contexts(row.context),
        request=row.request or None,
        timestamp=_timestamp(row.timestamp) if row.timestamp else None,
        feature=row.feature or None,
        risk_category=row.risk_category or None,
        model=row.model or None,
        claims=claims,
        judge=judge,
        attributes=_attributes(row.attributes) if row.attributes else {},
        line=line,
    )
    _ = trace.content_hash  # canonical JSON must be possible, as on the full path
    return trace


def _contexts(value: str | list[str | ContextItem]) -> tuple[ContextItem, ...]:
    if type(value) is str:
        return (ContextItem(value),) if value else ()
    return tuple(map(_context, value))  # type: ignore[arg-type]


def _context(item: str | ContextItem) -> ContextItem:
    return ContextItem(item) if type(item) is str else item  # type: ignore[return-value]


def _claims(items: list[str | Claim], response: str) -> tuple[Claim, ...]:
    """Claims whose offsets hold as given and do not overlap, in order; else _NotPlain (a
    repair, an overlap, claims out of order: check_offsets decides)."""
    placed_end = 0
    for index, item in enumerate(items):
        if type(item) is str:
            items[index] = Claim(item)
            continue
        start, end = item.start, item.end  # type: ignore[union-attr]
        if start is None and end is None:
            continue
        if start is None or end is None or start < placed_end or end < start:
            raise _NotPlain
        if end > len(response) or response[start:end] != item.text:  # type: ignore[union-attr]
            raise _NotPlain
        placed_end = end
    return tuple(items)  # type: ignore[arg-type]


def _verdicts(value: list[JudgeVerdict] | JudgeVerdict, claims: int) -> tuple[JudgeVerdict, ...]:
    """The verdicts as decoded, when parse.py would make each the same; else _NotPlain."""
    verdicts: list[JudgeVerdict] = value if isinstance(value, list) else [value]
    for verdict in verdicts:
        if verdict.level == "claim":
            if verdict.claim is None or verdict.claim >= claims:
                raise _NotPlain
        elif verdict.level != "response" or verdict.claim is not None:
            raise _NotPlain
        if verdict.score is not None and not math.isfinite(verdict.score):
            raise _NotPlain
    return tuple(verdicts)


def _timestamp(value: str) -> datetime:
    return _to_utc(datetime.fromisoformat(value.strip()))  # ValueError: the full path's message


def _attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    for value in attributes.values():
        if type(value) is list or type(value) is dict:
            check_json_value(value)  # ValueError: the full path names the attribute
    return attributes
