"""A rubric's response-level criteria: each rated on an ordinal scale of whole numbers, every
level defined (default relevance and coherence, 1-5). Checks what a lead writes; no store."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from annotate.errors import UsageError

CRITERIA_CALLS = ("off", "with_claims", "separate")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# off: our judge does not rate them (a version without criteria_call); with_claims: in the
# claims' call of a response-level rubric; separate: `annotate judge-ratings`, a call each.
# Pure: no store (the runtime check imports the prompt, and the prompt this module).
DEFAULT_CRITERIA_CALL = "off"


class CriteriaError(UsageError):
    """A rubric's criteria are not as a rating needs them; the message says the fix."""


def check_criteria(criteria: Any, call: Any) -> None:
    """Each criterion: a unique snake_case name, a question, levels of consecutive whole
    scores each with a definition (2 to 10 of them), optional true/false."""
    if call not in CRITERIA_CALLS:
        raise CriteriaError(
            f"criteria_call must be one of {', '.join(CRITERIA_CALLS)}, got {call!r}"
        )
    if not isinstance(criteria, list):
        raise CriteriaError(
            f"criteria must be a list of {{name, question, levels}}, got {type(criteria).__name__}"
        )
    seen: set[str] = set()
    for position, item in enumerate(criteria, start=1):
        name = _check_one(item, position)
        if name in seen:
            raise CriteriaError(f"criterion {position}: {name!r} is named twice; names are unique")
        seen.add(name)


def _check_one(item: Any, position: int) -> str:
    where = f"criterion {position}"
    if not isinstance(item, Mapping):
        raise CriteriaError(f"{where} must be an object with name, question and levels")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise CriteriaError(
            f"{where}: name must be lower-case letters, digits and _ (e.g. completeness), got {name!r}"
        )
    if not isinstance(item.get("question"), str) or not item["question"].strip():
        raise CriteriaError(f"{where} ({name}): question must be text, e.g. 'Is it complete?'")
    if not isinstance(item.get("optional", False), bool):
        raise CriteriaError(f"{where} ({name}): optional must be true or false")
    _check_levels(item.get("levels"), f"{where} ({name})")
    return name


def _check_levels(levels: Any, where: str) -> None:
    if not isinstance(levels, list) or not 2 <= len(levels) <= 10:
        raise CriteriaError(f"{where}: levels must be a list of 2 to 10 {{score, definition}}")
    scores = []
    for level in levels:
        score = level.get("score") if isinstance(level, Mapping) else None
        if type(score) is not int:
            raise CriteriaError(f"{where}: each level needs a whole score, got {score!r}")
        if not isinstance(level.get("definition"), str) or not level["definition"].strip():
            raise CriteriaError(f"{where}: level {score} needs its definition (text)")
        scores.append(score)
    if scores != list(range(scores[0], scores[0] + len(scores))):
        raise CriteriaError(f"{where}: scores must be consecutive and rising, got {scores}")


def scale_of(criterion: Mapping[str, Any]) -> tuple[int, int]:
    """(lowest, highest) score of a criterion."""
    scores = [level["score"] for level in criterion["levels"]]
    return min(scores), max(scores)


def find_criterion(criteria: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for item in criteria:
        if item["name"] == name:
            return item
    known = ", ".join(c["name"] for c in criteria) or "none"
    raise CriteriaError(f"the rubric has no criterion {name!r}; its criteria: {known}")


CRITERIA_KEYS = ("criteria", "criteria_call")


def criteria_extra(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The criteria part of a rubric's spec or content, checked; {} when it has none (a version
    made before criteria existed keeps its content and so its hash)."""
    if "criteria" not in spec:
        return {}
    criteria = spec["criteria"] if spec["criteria"] is not None else []
    call = spec.get("criteria_call") or DEFAULT_CRITERIA_CALL
    check_criteria(criteria, call)
    return {"criteria": list(criteria), "criteria_call": call}


def criteria_of(rubric: Any) -> list[dict[str, Any]]:
    """A Rubric's criteria (none for a version that has none)."""
    return list(rubric.extra.get("criteria", []))


def criteria_call(rubric: Any) -> str:
    return str(rubric.extra.get("criteria_call", DEFAULT_CRITERIA_CALL))


def scores_schema(criteria: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON schema of a judge's scores: each criterion's whole scores, all required."""
    scores = {
        item["name"]: {"type": "integer", "enum": [level["score"] for level in item["levels"]]}
        for item in criteria
    }
    return {
        "type": "object",
        "properties": scores,
        "required": list(scores),
        "additionalProperties": False,
    }


def parse_scores(given: Any, criteria: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """criterion -> score from a judge's answer; ValueError (never a guess) unless every
    criterion has a score of its scale."""
    if not isinstance(given, Mapping):
        raise ValueError("the answer has no ratings object")
    found = {}
    for item in criteria:
        score, allowed = given.get(item["name"]), [level["score"] for level in item["levels"]]
        if type(score) is not int or score not in allowed:
            raise ValueError(f"{item['name']}: {score!r} is not one of {allowed}")
        found[item["name"]] = score
    return found


def criteria_text(criteria: Sequence[Mapping[str, Any]]) -> str:
    """The criteria as a prompt shows them (the caller defuses it: it is the rubric's text)."""
    parts = []
    for item in criteria:
        levels = "\n".join(f"  {level['score']}: {level['definition']}" for level in item["levels"])
        parts.append(f"{item['name']}: {item['question']}\n{levels}")
    return "\n\n".join(parts)


class Rated(list):  # type: ignore[type-arg]
    """A response's claim verdicts, in claim order, with the scores the same call gave."""

    def __init__(self, verdicts: Sequence[Any], ratings: dict[str, int]) -> None:
        super().__init__(verdicts)
        self.ratings = ratings


def with_claims(rubric: Any) -> list[dict[str, Any]]:
    """The criteria a response-level judge call also rates (criteria_call: with_claims)."""
    if criteria_call(rubric) != "with_claims" or rubric.granularity != "response":
        return []
    return criteria_of(rubric)
