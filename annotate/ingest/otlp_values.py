"""OTLP's JSON encoding: a file's export objects (JSON Lines or one document), AnyValues,
attribute lists, trace and span ids, nanosecond times.

Tolerant decoding only: a malformed value becomes None and a broken line a RowError, never
an exception. Knows nothing of GenAI or span trees: see otlp_messages and otlp.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from annotate.ingest.generic import BOM, decode_line, json_problem
from annotate.traces import RowError, describe_type, shown

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HEX = frozenset("0123456789abcdefABCDEF")
NOT_AN_EXPORT = (
    "is not an OTLP export: expected a JSON object with resourceSpans or resourceLogs; "
    "export traces with the OpenTelemetry file exporter or OTLP/JSON"
)
_UTF8 = "re-save the file as UTF-8"
_ONE_DOCUMENT = "the file must be one OTLP JSON document or OTLP JSON Lines, one export a line"


def is_export(value: Any) -> bool:
    return isinstance(value, dict) and ("resourceSpans" in value or "resourceLogs" in value)


def any_value(value: Any) -> Any:
    """Decode an OTLP AnyValue ({"stringValue": ...}, {"intValue": "12"}, arrays, kvlists)."""
    if not isinstance(value, dict):
        return value
    for key, decode in _ANY_VALUE_DECODERS.items():
        if key in value:
            return decode(value[key])
    return None


def attributes_of(items: Any) -> dict[str, Any]:
    """An OTLP attribute list [{"key": ..., "value": AnyValue}] as a plain dict."""
    return {
        item["key"]: any_value(item.get("value"))
        for item in objects(items)
        if isinstance(item.get("key"), str)
    }


def int_value(raw: Any) -> int | None:
    try:
        return int(raw)  # int64 arrives as a JSON string in the protobuf JSON mapping
    except (TypeError, ValueError):
        return None


def _double_value(raw: Any) -> float | None:
    try:
        return float(raw)  # "NaN" and "Infinity" arrive as strings
    except (TypeError, ValueError):
        return None


_ANY_VALUE_DECODERS = {
    "stringValue": lambda raw: raw if isinstance(raw, str) else str(raw),
    "intValue": int_value,
    "doubleValue": _double_value,
    "boolValue": lambda raw: raw is True or raw == "true",
    "arrayValue": lambda raw: [any_value(v) for v in as_list(as_object(raw).get("values"))],
    "kvlistValue": lambda raw: attributes_of(as_object(raw).get("values")),
    "bytesValue": lambda raw: raw,  # base64 text; no GenAI attribute is bytes
}


def normalise_id(raw: Any, size: int) -> str | None:
    """Lowercase hex of a `size`-byte id given as hex (OTLP/JSON) or base64 (protobuf JSON)."""
    if not isinstance(raw, str) or not raw:
        return None
    if len(raw) == size * 2 and _HEX.issuperset(raw):
        return raw.lower()
    try:
        decoded = base64.b64decode(raw.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded.hex() if len(decoded) == size else None


def objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


MAX_NANOS = (
    (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC) - _EPOCH)
    // timedelta(microseconds=1)
    * 1000
)
_WHOLE = re.compile(r"-?[0-9]+")
_NANOS_FIX = (
    'write it as a whole number of nanoseconds since 1970, such as "1772877600000000000" '
    '(or "0" when the start is unknown): fix the exporter or re-export the spans'
)


def nanos_of(raw: Any) -> int | str:
    """A unix-nanosecond time as OTLP/JSON writes it (a decimal string, or a JSON number);
    0 when absent or "0" (unset). Otherwise the problem, worded to follow the field's name."""
    if raw is None:
        return 0
    if isinstance(raw, str) and _WHOLE.fullmatch(raw):
        nanos = int(raw)
    elif isinstance(raw, int) and not isinstance(raw, bool):
        nanos = raw
    elif isinstance(raw, float) and raw.is_integer():
        nanos = int(raw)
    else:
        return f"is {describe_type(raw)} ({shown(raw)}), not a whole number; {_NANOS_FIX}"
    if nanos < 0:
        return f"is {nanos}, which is before 1970; {_NANOS_FIX}"
    if nanos > MAX_NANOS:
        return (
            f"is {nanos}, which is after the year 9999 (the latest time the store holds); "
            "it must count nanoseconds since 1970: fix the exporter's clock or units"
        )
    return nanos


def timestamp_of(nanos: int) -> str | None:
    """ISO time of a unix-nanosecond count that nanos_of accepted; None for 0 (unset)."""
    if nanos <= 0:
        return None
    return (_EPOCH + timedelta(microseconds=min(nanos, MAX_NANOS) // 1000)).isoformat()


def export_documents(data: bytes) -> tuple[list[tuple[int, Any]], list[RowError]]:
    """(line, parsed export) pairs, and the lines that are not JSON.

    JSON Lines when the first non-blank line is a complete JSON object, else one document;
    a document that does not parse is retried as JSON Lines with a broken first line.
    """
    data = data.removeprefix(BOM)
    lines = data.split(b"\n")
    first = next((line for line in lines if line.strip()), b"")
    if isinstance(_parsed(first), dict):
        return _json_lines(lines)
    document = _parsed(data)
    if document is not None:
        return [(1, document)], []
    documents, errors = _json_lines(lines)
    if any(is_export(d) for _, d in documents):
        return documents, errors
    return [], [_document_error(data)]


def _parsed(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _json_lines(lines: list[bytes]) -> tuple[list[tuple[int, Any]], list[RowError]]:
    documents: list[tuple[int, Any]] = []
    errors: list[RowError] = []
    for number, raw in enumerate(lines, start=1):
        text = decode_line(raw, number)
        if isinstance(text, RowError):
            errors.append(text)
        elif text.strip():
            try:
                documents.append((number, orjson.loads(text)))
            except orjson.JSONDecodeError:
                errors.append(RowError(number, "", _bad_line(text)))
    return documents, errors


def _bad_line(text: str) -> str:
    return (
        f"is not valid JSON ({json_problem(text)}); each line of an OTLP JSON Lines file must "
        "be one complete export object: re-export the file or delete the broken line"
    )


def _document_error(data: bytes) -> RowError:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return RowError(line, "", f"is not valid UTF-8 (byte 0x{data[exc.start]:02x}); {_UTF8}")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        return RowError(exc.lineno, "", f"is not valid JSON ({where}); {_ONE_DOCUMENT}")
    except RecursionError:
        return RowError(1, "", f"is nested too deeply to read; {_ONE_DOCUMENT}")
    return RowError(1, "", f"is not accepted by the strict JSON parser; {_ONE_DOCUMENT}")
