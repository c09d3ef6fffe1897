"""The usual shapes of a verdict, a claim and an attribute, taken at once.

Each function returns the value only when every check of `annotate.traces.parse` is certain to
pass on it with nothing to repair, and None (False) otherwise: the caller then runs the full
checks, which name the problem. So the result never differs from the full checks'
(tests/test_import_fast_checks.py compares them row for row); only the common case is faster.
Pure: no I/O.
"""

from __future__ import annotations

import math
from typing import Any

from annotate.traces.limits import (
    INT32_MAX,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    check_finite,
    check_name,
    check_text,
)
from annotate.traces.rows import Claim, JudgeVerdict


def plain_claim(item: dict[str, Any]) -> Claim | None:
    """A claim object with both offsets, in order, and its text within the limits."""
    text, start, end = item.get("text"), item.get("start"), item.get("end")
    if type(text) is not str or type(start) is not int or type(end) is not int:
        return None
    if 0 <= start <= end <= INT32_MAX and plain_text(text):
        return Claim(text, start, end)
    return None


def plain_attribute(key: Any, value: Any) -> bool:
    """An ASCII name with a scalar value check_name and check_json_value certainly accept."""
    if type(key) is not str or len(key) > MAX_NAME_CHARS or not key.isascii() or "\x00" in key:
        return False
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is int:
        return -(2**63) <= value < 2**63
    if kind is str:
        return len(value) <= MAX_TEXT_CHARS and value.isascii() and "\x00" not in value
    if kind is float:
        return math.isfinite(value) and -(2**63) < value < 2**63
    return False


def plain_verdict(item: dict[str, Any]) -> JudgeVerdict | None:
    if item.get("ratings") is not None:  # checked by the full path
        return None
    label, level, claim = item.get("label"), item.get("level"), item.get("claim")
    if type(label) is not str or not label or not plain_name(label):
        return None
    if level == "claim":
        if type(claim) is not int or not 0 <= claim <= INT32_MAX:
            return None
    elif level == "response":
        claim = None
    else:
        return None
    score = item.get("score")
    if score is not None:
        if type(score) is not float and type(score) is not int:
            return None
        try:
            score = check_finite(score)
        except ValueError:
            return None
    judge = item.get("judge")
    if judge is not None and type(judge) is not str:
        return None
    judge = judge or "imported"
    explanation = item.get("explanation")
    if explanation is not None and (type(explanation) is not str or not plain_text(explanation)):
        return None
    if not plain_name(judge):
        return None
    return JudgeVerdict(judge, level, label, claim, score, explanation)


def plain_name(value: str) -> bool:
    """check_name(value) passes: inline for ASCII text (no surrogates), else the check itself."""
    if len(value) <= MAX_NAME_CHARS and value.isascii() and "\x00" not in value:
        return True
    return passes(check_name, value)


def plain_text(value: str) -> bool:
    """check_text(value) passes: inline for ASCII text (no surrogates), else the check itself."""
    if len(value) <= MAX_TEXT_CHARS and value.isascii() and "\x00" not in value:
        return True
    return passes(check_text, value)


def passes(check: Any, value: str) -> bool:
    try:
        check(value)
    except ValueError:
        return False
    return True
