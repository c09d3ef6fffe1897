"""What one imported value may be so the store can hold it: int32 numbers, finite floats,
timestamps in years 1-9999, text of bounded size with no lone surrogates or NUL characters.

Pure checks that raise ValueError with what arrived and the fix; callers name the field.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

INT32_MAX = 2**31 - 1
MAX_TEXT_CHARS = 16_000_000  # one response, context item, request or note
MAX_NAME_CHARS = 1_000  # ids and names: trace_id, feature, model, label, judge, source
MAX_DEPTH = 200  # nesting of attribute values; canonical JSON stops at 255
REVIEWER_NAME_CHARS = 64  # the rule `annotate user add` applies
_TIMESTAMP_RANGE = "years 1 to 9999 in UTC"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # what text never holds; tab, LF, CR do


def check_text(value: str, limit: int = MAX_TEXT_CHARS) -> str:
    """The text itself, or ValueError for what no store column can hold."""
    if len(value) > limit:
        raise ValueError(
            f"is {len(value):,} characters long; the most the store takes is {limit:,}: "
            "shorten it or split the row"
        )
    if "\x00" in value:
        column = value.index("\x00") + 1
        raise ValueError(
            f"holds a NUL character at character {column}, which is not text; "
            "remove it (the file may be partly binary)"
        )
    if value.isascii():  # O(1) in CPython: nothing to encode-check
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"holds a lone surrogate ({value[exc.start]!r} at character {exc.start + 1}), "
            "which is not valid Unicode text; re-export the text as UTF-8"
        ) from None
    return value


def check_name(value: str) -> str:
    return check_text(value, MAX_NAME_CHARS)


def check_int32(value: int, what: str) -> int:
    if not 0 <= value <= INT32_MAX:
        raise ValueError(f"must be {what} between 0 and {INT32_MAX:,}, got {value}")
    return value


def check_int64(value: int) -> int:
    """An integer a signed 64-bit column holds: -2**63 to 2**63 - 1."""
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"holds the integer {value}, beyond 64 bits; write it as a string")
    return value


def text_of_bytes(value: bytes) -> str:
    """Bytes that are UTF-8 text, as that text: what an older Parquet writer (Hive, Impala,
    Spark) stores a string column as, without marking it text. Anything else is binary data,
    which no field holds: ValueError naming the first byte that is not text."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start + 1} (0x{value[exc.start]:02x}) is not UTF-8"
    else:
        control = _CONTROL.search(text)
        if control is None:
            return text
        where = f"it holds the control character 0x{ord(control.group()):02x}"
    shown = " ".join(f"{b:02x}" for b in value[:16]) + (" …" if len(value) > 16 else "")
    raise ValueError(
        f"is binary data, not text ({len(value):,} bytes: {shown}; {where}); cast the column "
        "to a string when you write the file, or drop the column"
    )


def check_finite(value: float) -> float:
    """One rule for every format: NaN and Infinity are not scores (JSON cannot hold them)."""
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(
            f"must be a finite number, got {value!r}; write null (or leave it out) for no score"
        )
    return number


def check_exact_number(value: float) -> float:
    """A float that can stand for the number written: finite and below 2**63 in size.

    orjson reads an integer past 64 bits as the nearest float, without a word (2**70 becomes
    1.1805916207174113e+21), so a float this large may be an id already rounded; it is refused
    rather than stored changed, like the integers past 64 bits that arrive exact."""
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):  # not check_finite: this value is not a score
        raise ValueError(
            f"must be a finite number, got {value!r}; NaN and Infinity cannot be stored: write "
            "null or leave it out, or write it as a string"
        )
    if abs(number) >= 2**63:
        raise ValueError(
            f"holds the number {value!r}, too large to keep exactly (an integer past 64 bits "
            "arrives rounded); write it as a string"
        )
    return number


# Unicode categories a user name may not hold: control and format characters (zero-width
# spaces, right-to-left overrides), line and paragraph separators, private-use, unassigned
# and surrogate code points. Each can make one name look like another.
_HIDDEN_CATEGORIES = ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs")


def check_reviewer_name(value: str) -> str:
    """The user-name rule for every route that names a reviewer: 1-64 characters, no spaces,
    nothing invisible."""
    name = value.strip()
    if not name or len(name) > REVIEWER_NAME_CHARS or any(c.isspace() for c in name):
        shown = name if len(name) <= 40 else name[:40] + "…"
        raise ValueError(
            f"must be a user name of 1-{REVIEWER_NAME_CHARS} characters with no spaces, "
            f"got {shown!r} ({len(name):,} characters)"
        )
    hidden = next((c for c in name if unicodedata.category(c) in _HIDDEN_CATEGORIES), None)
    if hidden is not None:
        raise ValueError(
            f"holds the invisible character U+{ord(hidden):04X} "
            f"({unicodedata.name(hidden, 'unnamed')}), which would let one name pass for "
            f"another; type the name again without it"
        )
    check_name(name)
    return name


def to_utc(moment: datetime) -> datetime:
    """Naive UTC; ValueError when the offset moves it outside the years a datetime holds."""
    if moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:
        raise ValueError(
            f"{moment.isoformat()} is outside the range the store can hold "
            f"({_TIMESTAMP_RANGE}) once converted to UTC; fix the date or its offset"
        ) from None


def check_json_value(value: Any, depth: int = 0) -> None:
    """Attribute values: finite numbers, storable text, keys that are text, bounded nesting."""
    if depth > MAX_DEPTH:
        raise ValueError(f"is nested more than {MAX_DEPTH} levels deep; flatten it")
    if isinstance(value, str):
        check_text(value)
    elif isinstance(value, float):
        check_exact_number(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        check_int64(value)
    elif isinstance(value, bytes | bytearray | memoryview):  # readers hand over text_of_bytes
        raise ValueError("is bytes, not text; decode it to a string (or leave it out)")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_text(str(key), MAX_NAME_CHARS)
            check_json_value(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            check_json_value(item, depth + 1)
