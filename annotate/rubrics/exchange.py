"""A rubric version out and in: YAML for machines (re-imports to the same version), Markdown for
people, each with its calibration card and fingerprint when the version was marked calibrated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from annotate.accounts.activity import Actor
from annotate.errors import InputError, slice_label
from annotate.rubrics.card import card_status
from annotate.rubrics.render import card_markdown
from annotate.rubrics.versions import Rubric, get_rubric, save_version
from annotate.store import Store
from annotate.store import rubrics as sql

FORMAT = "annotate-rubric/1"


def latest_calibration(store: Store, version: int) -> dict[str, Any] | None:
    marks = sql.calibrations(store, version)
    return marks[-1] if marks else None


def export_document(store: Store, version: int) -> dict[str, Any]:
    rubric = get_rubric(store, version)
    mark = latest_calibration(store, version)
    document: dict[str, Any] = {
        "format": FORMAT,
        "version": rubric.version,
        "parent": rubric.parent,
        "content_hash": rubric.content_hash,
        "rubric": rubric.content(),
    }
    if mark is not None:
        document["calibrated"] = {
            "slices": mark["slices"],
            "marked_by": mark["marked_by"],
            "marked_at": str(mark["marked_at"]),
            "status": card_status(store, mark["card"])["status"],
            "card": mark["card"],
        }
    return document


def export_yaml(store: Store, version: int) -> str:
    return yaml.safe_dump(export_document(store, version), sort_keys=False, allow_unicode=True)


def export_markdown(store: Store, version: int) -> str:
    rubric = get_rubric(store, version)
    lines = [f"# Rubric version {rubric.version}: {rubric.name}", ""]
    lines += [
        f"Model {rubric.model}, granularity {rubric.granularity}, parent "
        f"{rubric.parent or '—'}, by {rubric.created_by} at {rubric.created_at:%Y-%m-%d %H:%M}.",
        "",
        "## Instructions",
        "",
        rubric.instructions,
        "",
        "## Labels",
        "",
        "| label | definition | binary |",
        "|---|---|---|",
    ]
    lines += [f"| {i['label']} | {i['definition']} | {i['binary']} |" for i in rubric.labels]
    lines += ["", f"Error types: {', '.join(rubric.error_types)}", ""]
    lines += [f"Few-shot examples: {len(rubric.few_shot)}", ""]
    mark = latest_calibration(store, version)
    if mark is None:
        lines += ["Not marked calibrated.", ""]
    else:
        where = "; ".join(slice_label(s) for s in mark["slices"]) or "no slice"
        lines += [f"Calibrated for: {where} (marked by {mark['marked_by']})", ""]
        lines += card_markdown(mark["card"], card_status(store, mark["card"]))
    return "\n".join(lines) + "\n"


def import_rubric(store: Store, path: Path, actor: Actor | str | None) -> Rubric:
    """The version the YAML holds: the one already stored with the same content, else a new one."""
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: not a readable YAML rubric ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(
            f"{path}: field 'format' must be {FORMAT!r} (write it with `annotate rubric export`)"
        )
    content = document.get("rubric")
    if not isinstance(content, dict):
        raise InputError(f"{path}: field 'rubric' must hold the rubric's content")
    parent = document.get("parent")
    parent = parent if isinstance(parent, int) and sql.rubric_row(store, parent) else None
    return save_version(store, content, actor, parent, note=f"imported from {Path(path).name}")
