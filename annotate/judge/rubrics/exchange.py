"""A rubric version out and in: YAML for machines (re-imports to the same version), Markdown for
people, each with its calibration card and fingerprint when the version was marked calibrated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor
from annotate.errors import InputError, slice_label
from annotate.judge.rubrics.card import card_status
from annotate.judge.rubrics.render import card_markdown, cell
from annotate.judge.rubrics.rubric_file import FORMAT, MAX_BYTES, dump_document, read_document  # noqa: F401
from annotate.judge.rubrics.versions import SPEC_KEYS, Rubric, RubricError, get_rubric, save_version
from annotate.ratings.criteria import CRITERIA_KEYS
from annotate.store import Store
from annotate.store import rubrics as sql
from annotate.traces.markdown import inert_lines


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
    return dump_document(export_document(store, version))


def export_markdown(store: Store, version: int) -> str:
    """The version for people; every text in it (a name, the instructions, a definition, a
    slice) is inert Markdown: a rubric may have been drafted by an LLM or from traces."""
    rubric = get_rubric(store, version)
    lines = [f"# Rubric version {rubric.version}: {cell(rubric.name)}", ""]
    lines += [
        f"Model {cell(rubric.model)}, granularity {cell(rubric.granularity)}, parent "
        f"{rubric.parent or '—'}, by {cell(rubric.created_by)} at "
        f"{rubric.created_at:%Y-%m-%d %H:%M}.",
        "",
        "## Instructions",
        "",
        inert_lines(rubric.instructions),
        "",
        "## Labels",
        "",
        "| label | definition | binary |",
        "|---|---|---|",
    ]
    lines += [
        f"| {cell(i['label'])} | {cell(i['definition'])} | {cell(i['binary'])} |"
        for i in rubric.labels
    ]
    lines += ["", f"Error types: {', '.join(cell(e) for e in rubric.error_types)}", ""]
    lines += [f"Few-shot examples: {len(rubric.few_shot)}", ""]
    mark = latest_calibration(store, version)
    if mark is None:
        lines += ["Not marked calibrated.", ""]
    else:
        where = "; ".join(slice_label(s) for s in mark["slices"]) or "no slice"
        lines += [f"Calibrated for: {cell(where)} (marked by {cell(mark['marked_by'])})", ""]
        lines += card_markdown(mark["card"], card_status(store, mark["card"]))
    return "\n".join(lines) + "\n"


def import_rubric(store: Store, path: Path, actor: Actor | str | None) -> Rubric:
    """The version the YAML holds: the one already stored with the same content, else a new one."""
    document = read_document(path)
    content = document["rubric"]
    unknown = sorted(map(str, set(content) - {"name", "labels", *SPEC_KEYS, *CRITERIA_KEYS}))
    if unknown:  # a misspelt `instruction:` would be dropped and the old version returned
        raise InputError(
            f"{path}: rubric: no field {', '.join(unknown)}; a rubric has name, labels, "
            f"{', '.join(SPEC_KEYS)}"
        )
    parent = document.get("parent")
    parent = parent if isinstance(parent, int) and sql.rubric_row(store, parent) else None
    try:
        return save_version(store, content, actor, parent, note=f"imported from {Path(path).name}")
    except RubricError as exc:  # which file, then which field and the fix
        raise RubricError(f"{path}: rubric: {exc}") from None
