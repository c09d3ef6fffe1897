"""A plain record -> a Trace, or a list of RowErrors that name the field and the fix.

Pure: no I/O, no store. Every reader yields Records; `parse_record` checks each the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from annotate.traces import plain
from annotate.traces.keys import unknown_keys
from annotate.traces.limits import (
    check_exact_number,
    check_finite,
    check_int32,
    check_int64,
    check_json_value,
    check_name,
    check_text,
    to_utc,
)
from annotate.traces.offsets import OffsetProblem, check_offsets
from annotate.traces.rows import (
    Claim,
    ContextItem,
    JudgeVerdict,
    Record,
    RowError,
    Trace,
    describe_type,
    shown,
    unexpected_error,
)
from annotate.traces.rows import FieldInvalid as _Invalid
from annotate.traces.verdict_fields import check_claim_references, rated_label, trace_ratings

KNOWN_FIELDS = (
    "trace_id",
    "timestamp",
    "feature",
    "risk_category",
    "model",
    "request",
    "context",
    "response",
    "claims",
    "judge",
    "attributes",
    "ratings",
)
REQUIRED_FIELDS = ("trace_id", "response", "context")
JUDGE_LEVELS = ("claim", "response")


def parse_record(record: Record) -> Trace | list[RowError]:
    """Validate one record; collect every field error on the row, not just the first.

    Never raises: an unexpected exception while checking the row becomes that row's error."""
    try:
        return _parse_record(record)
    except Exception as exc:  # a bug must cost one row, never the file
        return [unexpected_error(record, exc)]


def _parse_record(record: Record) -> Trace | list[RowError]:
    data = record.data
    if not _is_mapping(data):
        return [
            RowError(
                record.line,
                "",
                f"must be a JSON object with trace_id, response and context, got {describe_type(data)}",
                record.unit,
            )
        ]
    errors: list[RowError] = []
    values: dict[str, Any] = {}
    for source, (name, parse) in _FIELD_PARSERS.items():
        try:
            values[name] = parse(data.get(source), source in data)
        except _Invalid as exc:
            errors.append(RowError(record.line, exc.field, exc.message, record.unit))
    if errors:  # a key ignored (`lable`) may be why a field is missing: say so beside it
        return errors + _noted(record, unknown_keys(data))
    try:
        attributes = _extra_attributes(values.pop("attributes"), data)
        values["claims"], repaired = _checked_claims(values["response"], values["claims"])
        check_claim_references(values["claims"], values["judge"])
        values["judge"] += trace_ratings(data.get("ratings"))
    except _Invalid as exc:
        return _noted(record, [(exc.field, exc.message), *unknown_keys(data)])
    warnings = _noted(record, [*unknown_keys(data), *repaired])  # not content: not hashed
    trace = Trace(**values, attributes=attributes, line=record.line, warnings=tuple(warnings))
    _ = trace.content_hash  # canonical JSON must be possible before the row is accepted
    return trace


def _noted(record: Record, notes: list[tuple[str, str]]) -> list[RowError]:
    return [RowError(record.line, field, message, record.unit) for field, message in notes]


def _extra_attributes(attributes: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Declared attributes plus every unknown top-level key, each checked for the store."""
    merged = dict(attributes)
    for key, value in data.items():
        if key not in KNOWN_FIELDS:
            merged[key] = value
    for key, value in merged.items():
        if plain.plain_attribute(key, value):
            continue
        name = key if key in data and key not in KNOWN_FIELDS else f"attributes.{key}"
        _limited(name, check_name, str(key))
        _limited(name, check_json_value, value)
    return merged


def _checked_claims(
    response: str, claims: tuple[Claim, ...]
) -> tuple[tuple[Claim, ...], list[tuple[str, str]]]:
    try:
        fixed, warnings = check_offsets(response, claims)
    except OffsetProblem as exc:
        raise _Invalid(exc.field, exc.message) from None
    return tuple(fixed), warnings


def _limited(name: str, check: Any, value: Any) -> Any:
    """Run a traces.limits check; its ValueError becomes this field's error."""
    try:
        return check(value)
    except ValueError as exc:
        raise _Invalid(name, str(exc)) from None


def _is_mapping(value: Any) -> bool:
    """isinstance(value, Mapping), with the common case (a dict) first: the ABC check is slow."""
    return type(value) is dict or isinstance(value, Mapping)


def _required_text(name: str) -> Any:
    def parse(value: Any, present: bool) -> str:
        if not present or value is None:
            raise _Invalid(name, f"is required: add a {name} (a string) to the row")
        if isinstance(value, int) and not isinstance(value, bool) and name == "trace_id":
            return str(_limited(name, check_int64, value))
        if not isinstance(value, str):
            raise _Invalid(name, f"must be a string, got {describe_type(value)}")
        if name == "trace_id" and not value.strip():
            raise _Invalid(name, "must not be empty")
        return _limited(name, check_name if name == "trace_id" else check_text, value)

    return parse


def _optional_text(name: str) -> Any:
    def parse(value: Any, present: bool) -> str | None:
        if value is None or value == "":
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float):
                return str(_limited(name, check_exact_number, value))
            return str(_limited(name, check_int64, value))
        if not isinstance(value, str):
            raise _Invalid(name, f"must be a string, got {describe_type(value)}")
        return _limited(name, check_text if name == "request" else check_name, value)

    return parse


def _parse_timestamp(value: Any, present: bool) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise _Invalid(
                "timestamp",
                f"must be an ISO 8601 date-time such as 2026-03-01T12:00:00Z, got {value[:40]!r}",
            ) from None
    else:
        raise _Invalid("timestamp", f"must be an ISO 8601 string, got {describe_type(value)}")
    return _limited("timestamp", to_utc, moment)


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO 8601 value (or datetime) in naive UTC; ValueError says what was expected."""
    try:
        return _parse_timestamp(value, True)
    except _Invalid as exc:
        raise ValueError(exc.message) from None


_CONTEXT_SHAPE = "must be a list of strings or {source, text} objects"


def _parse_context(value: Any, present: bool) -> tuple[ContextItem, ...]:
    if not present or value is None:
        raise _Invalid(
            "context",
            "is required: add the documents the model saw, as a list of strings or "
            "{source, text} objects (an empty list [] if it saw none)",
        )
    if isinstance(value, str):
        return (ContextItem(value),) if value else ()
    if not isinstance(value, list | tuple):
        raise _Invalid("context", f"{_CONTEXT_SHAPE}, got {describe_type(value)}")
    return tuple(_parse_context_item(item, index) for index, item in enumerate(value))


def _parse_context_item(item: Any, index: int) -> ContextItem:
    if type(item) is str:
        try:
            return ContextItem(check_text(item))
        except ValueError as exc:
            raise _Invalid(f"context[{index}]", str(exc)) from None
    if _is_mapping(item) and isinstance(item.get("text"), str):
        source = item.get("source")
        if source is not None and not isinstance(source, str):
            raise _Invalid(
                f"context[{index}].source", f"must be a string, got {describe_type(source)}"
            )
        if source is not None:
            try:
                check_name(source)
            except ValueError as exc:
                raise _Invalid(f"context[{index}].source", str(exc)) from None
        try:
            return ContextItem(check_text(item["text"]), source)
        except ValueError as exc:
            raise _Invalid(f"context[{index}].text", str(exc)) from None
    if isinstance(item, str):
        return ContextItem(_limited(f"context[{index}]", check_text, item))
    got = "an object without a text string" if _is_mapping(item) else describe_type(item)
    raise _Invalid(f"context[{index}]", f"{_CONTEXT_SHAPE}, got {got}")


def _parse_claims(value: Any, present: bool) -> tuple[Claim, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise _Invalid(
            "claims", f"must be a list of {{text, start, end}} objects, got {describe_type(value)}"
        )
    return tuple(_parse_claim(item, index) for index, item in enumerate(value))


def _parse_claim(item: Any, index: int) -> Claim:
    """A claim object with both offsets in order is taken at once; anything else (and any
    value a check refuses) goes through every check in order, which names the problem."""
    if type(item) is dict:
        claim = plain.plain_claim(item)
        if claim is not None:
            return claim
    return _parse_claim_checked(item, index)


def _parse_claim_checked(item: Any, index: int) -> Claim:
    name = f"claims[{index}]"
    if isinstance(item, str):
        return Claim(_limited(name, check_text, item))
    if not _is_mapping(item) or not isinstance(item.get("text"), str):
        raise _Invalid(
            name, f"must be a string or a {{text, start, end}} object, got {describe_type(item)}"
        )
    start, end = item.get("start"), item.get("end")
    for key, offset in (("start", start), ("end", end)):
        if offset is not None and (
            not isinstance(offset, int) or isinstance(offset, bool) or offset < 0
        ):
            raise _Invalid(
                f"{name}.{key}",
                f"must be a character offset (an integer >= 0), got {shown(offset)}",
            )
        if offset is not None:
            _limited(f"{name}.{key}", lambda v: check_int32(v, "a character offset"), offset)
    if start is not None and end is not None and end < start:
        raise _Invalid(f"{name}.end", f"must not be before start ({end} < {start})")
    return Claim(_limited(f"{name}.text", check_text, item["text"]), start, end)


def _parse_judge(value: Any, present: bool) -> tuple[JudgeVerdict, ...]:
    if value is None:
        return ()
    if _is_mapping(value):
        value = [value]
    if not isinstance(value, list | tuple):
        raise _Invalid("judge", f"must be a list of verdict objects, got {describe_type(value)}")
    return tuple(_parse_verdict(item, index) for index, item in enumerate(value))


def _parse_verdict(item: Any, index: int) -> JudgeVerdict:
    """A verdict with the usual shape is taken at once; anything else (and any value a check
    refuses) goes through every check in order, which names the first problem."""
    if type(item) is dict:
        verdict = plain.plain_verdict(item)
        if verdict is not None:
            return verdict
    return _parse_verdict_checked(item, index)


def _parse_verdict_checked(item: Any, index: int) -> JudgeVerdict:
    name = f"judge[{index}]"
    if not _is_mapping(item):
        raise _Invalid(
            name, f"must be an object with judge, level and label, got {describe_type(item)}"
        )
    ratings, label = rated_label(item, name)
    if not isinstance(label, str) or not (label or ratings):
        got = "an empty string" if label == "" else describe_type(label)
        raise _Invalid(f"{name}.label", f"must be a non-empty string, got {got}")
    _limited(f"{name}.label", check_name, label)
    level = item.get("level") or ("claim" if item.get("claim") is not None else "response")
    if not isinstance(level, str) or level not in JUDGE_LEVELS:
        raise _Invalid(f"{name}.level", f'must be "claim" or "response", got {shown(level)}')
    claim = item.get("claim")
    if level == "claim" and (not isinstance(claim, int) or isinstance(claim, bool) or claim < 0):
        raise _Invalid(
            f"{name}.claim",
            f"must be the claim's index (an integer >= 0) for a claim-level verdict, got {shown(claim)}",
        )
    if level == "claim":
        _limited(f"{name}.claim", lambda v: check_int32(v, "the claim's index"), claim)
    score = item.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise _Invalid(f"{name}.score", f"must be a number, got {describe_type(score)}")
    explanation = item.get("explanation")
    return JudgeVerdict(
        judge=_limited(f"{name}.judge", _judge_name, item.get("judge")),
        level=level,
        label=label,
        claim=claim if level == "claim" else None,
        score=_limited(f"{name}.score", check_finite, score) if score is not None else None,
        explanation=_limited(f"{name}.explanation", check_text, explanation)
        if isinstance(explanation, str)
        else None,
        ratings=ratings,
    )


def check_verdict(data: Any) -> JudgeVerdict | tuple[str, str]:
    """One verdict object on its own: the verdict, or (field, message) naming what is wrong."""
    try:
        return _parse_verdict(data, 0)
    except _Invalid as exc:
        return exc.field.removeprefix("judge[0]").lstrip("."), exc.message


def _judge_name(value: Any) -> str:
    if isinstance(value, float):
        check_finite(value)
    return check_name(str(value or "imported"))


def _parse_attributes(value: Any, present: bool) -> dict[str, Any]:
    if value is None:
        return {}
    if not _is_mapping(value):
        raise _Invalid(
            "attributes", f"must be an object of name: value, got {describe_type(value)}"
        )
    return dict(value)


# source key in the record -> (Trace field, parser)
_FIELD_PARSERS = {
    "trace_id": ("trace_id", _required_text("trace_id")),
    "response": ("response", _required_text("response")),
    "context": ("contexts", _parse_context),
    "request": ("request", _optional_text("request")),
    "timestamp": ("timestamp", _parse_timestamp),
    "feature": ("feature", _optional_text("feature")),
    "risk_category": ("risk_category", _optional_text("risk_category")),
    "model": ("model", _optional_text("model")),
    "claims": ("claims", _parse_claims),
    "judge": ("judge", _parse_judge),
    "attributes": ("attributes", _parse_attributes),
}
