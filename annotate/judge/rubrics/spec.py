"""A rubric's content as a value: the Rubric dataclass, its content hash and the checks every
field must pass. Pure (no store, no accounts): the runtime check (annotate.check) builds a Rubric
from an exported file with it; versions.py stores and finds them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotate.errors import UsageError

GRANULARITIES = ("claim", "response", "question")
BASELINE_MODEL = "offline-baseline"
SPEC_KEYS = ("error_types", "instructions", "few_shot", "model", "settings", "granularity")
# settings a run reads -> the whole numbers it can use (the Messages API's output ceiling)
WHOLE_SETTINGS = {"max_tokens": (1, 64_000)}


class RubricError(UsageError):
    """A rubric version cannot be made or found as asked; the message says what to do."""


@dataclass(frozen=True)
class Rubric:
    version: int
    name: str
    labels: list[dict[str, Any]]
    error_types: list[str]
    instructions: str
    few_shot: list[dict[str, Any]]
    model: str
    settings: dict[str, Any]
    granularity: str
    parent: int | None = None
    note: str | None = None
    created_by: str | None = None
    created_at: datetime | None = None
    content_hash: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label_names(self) -> list[str]:
        return [item["label"] for item in self.labels]

    def binary(self) -> dict[str, str]:
        return {item["label"]: item["binary"] for item in self.labels}

    def content(self) -> dict[str, Any]:
        """What the version says (no number, author or time): hashed, exported, compared."""
        return {
            "name": self.name,
            "labels": self.labels,
            **{key: getattr(self, key) for key in SPEC_KEYS},
            **self.extra,  # the response-level criteria, when the version has them
        }

    def judge_name(self, model: str | None = None) -> str:
        """The name the verdicts carry: one judge per (rubric version, model)."""
        return f"rubric-v{self.version}:{model or self.model}"


def content_hash(content: Mapping[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_content(content: Mapping[str, Any], base: Rubric | None) -> None:
    """Every field a judge needs, of the right kind; labels as reviewers know them."""
    if content.get("granularity") not in GRANULARITIES:
        raise RubricError(
            f"granularity must be one of {', '.join(GRANULARITIES)}, got {content.get('granularity')!r}"
        )
    model = content.get("model")
    if not isinstance(model, str) or not model.strip():
        raise RubricError(
            f"model must be a judge model id, e.g. claude-haiku-4-5 or offline-baseline, got {model!r}"
        )
    check_texts(content)
    if not isinstance(content.get("instructions"), str):
        raise RubricError("instructions must be text")
    if not content["instructions"].strip():
        raise RubricError(
            "instructions are empty: write what the judge should check, e.g. "
            "'Mark a claim unsupported when no context sentence states it.'"
        )
    check_settings(content.get("settings"))
    labels = content.get("labels")
    if not isinstance(labels, list) or not labels:
        raise RubricError("a rubric needs its labels: [{label, definition, binary}, ...]")
    for position, item in enumerate(labels):
        if not isinstance(item, dict) or not {"label", "definition", "binary"} <= set(item):
            raise RubricError(f"label {position + 1} needs label, definition and binary")
    if base is not None:
        before = [(i["label"], i["binary"]) for i in base.labels]
        after = [(i["label"], i["binary"]) for i in labels]
        if before != after:
            raise RubricError(
                "a new version keeps the label names and their binary mapping reviewers use "
                f"({', '.join(f'{a}={b}' for a, b in before)}); edit definitions instead"
            )
    few_shot = content.get("few_shot") or []
    if not isinstance(few_shot, list):
        raise RubricError(f"few_shot must be a list of examples, got {few_shot!r:.80}")
    for position, example in enumerate(few_shot, start=1):
        if not isinstance(example, dict) or not isinstance(example.get("trace_id"), str):
            raise RubricError(f"few-shot example {position} needs trace_id (text) and claim_index")
        index = example.get("claim_index")
        if type(index) is not int or index < 0:  # true is no claim index
            raise RubricError(
                f"few-shot example {position}: claim_index must be a whole number from 0, "
                f"got {index!r:.80}"
            )


def check_texts(content: Mapping[str, Any]) -> None:
    """The name, error types and label definitions are text (the prompt shows them)."""
    name = content.get("name")
    if name is not None and not isinstance(name, str):
        raise RubricError(f"name must be text, got {name!r:.80}")
    error_types = content.get("error_types") or []
    if not isinstance(error_types, list) or not all(isinstance(e, str) for e in error_types):
        raise RubricError(
            f"error_types must be a list of names such as [entity, number], got {error_types!r:.80}"
        )
    labels = content.get("labels")
    for position, item in enumerate(labels if isinstance(labels, list) else [], start=1):
        if isinstance(item, dict) and not isinstance(item.get("definition", ""), str):
            raise RubricError(f"label {position}: definition must be text")


def check_settings(settings: Any) -> None:
    """Only settings a run can use: a mapping whose numbers are in range (None: no settings)."""
    if settings is None:
        return
    if not isinstance(settings, Mapping):
        raise RubricError(
            f"settings must be a mapping such as {{max_tokens: 1024}}, got {settings!r}"
        )
    for name, (low, high) in WHOLE_SETTINGS.items():
        value = settings.get(name, low)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise RubricError(
                f"settings.{name} must be a whole number from {low} to {high:,}, got {value!r}; "
                f"e.g. {name}: 1024"
            )
