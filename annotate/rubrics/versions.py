"""Rubric versions: immutable once stored. Editing makes a new version with its parent; an
identical rubric is found by its content hash instead of being stored twice.

A version keeps the label names and binary mapping reviewers use (changing them would
orphan the stored labels); everything else (definitions, instructions, error types,
few-shot examples, model, settings, granularity) may change from one version to the next.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.errors import UsageError
from annotate.store import Store
from annotate.store import rubrics as sql

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
        }

    def judge_name(self, model: str | None = None) -> str:
        """The name the verdicts carry: one judge per (rubric version, model)."""
        return f"rubric-v{self.version}:{model or self.model}"


def content_hash(content: Mapping[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _from_row(row: Mapping[str, Any]) -> Rubric:
    spec = row["spec"] or {}
    rubric = Rubric(
        version=int(row["version"]),
        name=row["name"],
        labels=row["labels"],
        error_types=list(spec.get("error_types", [])),
        instructions=spec.get("instructions", ""),
        few_shot=list(spec.get("few_shot", [])),
        model=spec.get("model", ""),
        settings=dict(spec.get("settings", {})),
        granularity=spec.get("granularity", "claim"),
        parent=row.get("parent"),
        note=row.get("note"),
        created_by=row.get("created_by"),
        created_at=row.get("created_at"),
    )
    return _with_hash(rubric)


def _with_hash(rubric: Rubric) -> Rubric:
    from dataclasses import replace

    return replace(rubric, content_hash=content_hash(rubric.content()))


def list_rubrics(store: Store) -> list[Rubric]:
    return [_from_row(row) for row in sql.rubric_rows(store)]


def get_rubric(store: Store, version: int | None = None) -> Rubric:
    """One version; None: the current one."""
    wanted = current_version(store) if version is None else int(version)
    row = sql.rubric_row(store, wanted)
    if row is None:
        known = ", ".join(str(r.version) for r in list_rubrics(store))
        raise RubricError(f"no rubric version {wanted}; versions: {known} (`annotate rubric list`)")
    return _from_row(row)


def current_version(store: Store) -> int:
    return sql.current_version(store)


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


def save_version(
    store: Store,
    content: Mapping[str, Any],
    actor: Actor | str | None,
    parent: int | None,
    note: str | None = None,
) -> Rubric:
    """Store `content` as a new version, or return the version already holding exactly it."""
    base = get_rubric(store, parent) if parent is not None else None
    check_content(content, base or get_rubric(store, 1))
    clean = {"name": content.get("name") or "default", "labels": content["labels"]}
    clean.update({key: content.get(key) for key in SPEC_KEYS})
    clean["few_shot"] = list(clean["few_shot"] or [])
    clean["error_types"] = list(clean["error_types"] or [])
    clean["settings"] = dict(clean["settings"] or {})
    digest = content_hash(clean)
    twin = next((r for r in list_rubrics(store) if r.content_hash == digest), None)
    if twin is not None:  # version 1 has no stored hash: compare computed ones
        return twin
    who = as_actor(actor)
    with store.transaction():
        version = sql.insert_rubric(
            store,
            {
                "name": clean["name"],
                "labels": clean["labels"],
                "spec": {key: clean[key] for key in SPEC_KEYS},
                "parent": parent,
                "note": note,
                "created_by": who.name,
                "content_hash": digest,
            },
        )
        record_act(store, who, "rubric", f"rubric v{version}", parent=parent, note=note)
    return get_rubric(store, version)


def edit_rubric(
    store: Store,
    version: int,
    changes: Mapping[str, Any],
    actor: Actor | str | None,
    note: str | None = None,
) -> Rubric:
    """A new version: `version`'s content with `changes` applied; the old one is untouched."""
    base = get_rubric(store, version)
    unknown = set(changes) - set(SPEC_KEYS) - {"labels", "name"}
    if unknown:
        raise RubricError(
            f"a rubric has no field {', '.join(sorted(unknown))}; fields: {', '.join(SPEC_KEYS)}"
        )
    return save_version(store, {**base.content(), **changes}, actor, version, note)


def make_current(store: Store, version: int, actor: Actor | str | None) -> None:
    """The version `annotate judge` uses by default (a setting; the version is unchanged)."""
    get_rubric(store, version)
    with store.transaction():
        sql.set_current_version(store, version)
        record_act(store, actor, "setting", "rubric_current", version=version)
