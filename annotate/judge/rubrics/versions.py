"""Rubric versions: immutable once stored. Editing makes a new version with its parent; an
identical rubric is found by its content hash instead of being stored twice.

A version keeps the label names and binary mapping reviewers use (changing them would
orphan the stored labels); everything else (definitions, instructions, error types,
few-shot examples, model, settings, granularity) may change from one version to the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.judge.rubrics.spec import (  # noqa: F401 - their home was here; callers import them here
    BASELINE_MODEL,
    GRANULARITIES,
    SPEC_KEYS,
    WHOLE_SETTINGS,
    Rubric,
    RubricError,
    check_content,
    check_settings,
    check_texts,
    content_hash,
)
from annotate.ratings.criteria import CRITERIA_KEYS, criteria_extra
from annotate.store import Store
from annotate.store import rubrics as sql


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
        extra=criteria_extra(spec),
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
    clean.update(criteria_extra(content))
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
                "spec": {key: clean[key] for key in SPEC_KEYS} | criteria_extra(clean),
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
    unknown = set(changes) - set(SPEC_KEYS) - {"labels", "name", *CRITERIA_KEYS}
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
