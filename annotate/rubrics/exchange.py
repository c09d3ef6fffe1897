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
from annotate.rubrics.render import card_markdown, cell
from annotate.rubrics.versions import SPEC_KEYS, Rubric, RubricError, get_rubric, save_version
from annotate.store import Store
from annotate.store import rubrics as sql
from annotate.traces.markdown import inert_lines

FORMAT = "annotate-rubric/1"
MAX_BYTES = 10_000_000  # a rubric with its card is kilobytes; more is not a rubric file


class _Loader(yaml.SafeLoader):
    """Safe YAML without aliases: `*a` repeated in `*b` ... is a small file that expands to
    billions of values when hashed. Our exports never write one (_Dumper)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, "a rubric file holds no YAML alias (*name); write the value out", mark
            )
        return super().compose_node(parent, index)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


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
    document = export_document(store, version)
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


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
    try:
        size = Path(path).stat().st_size
        if size > MAX_BYTES:
            raise InputError(f"{path}: {size:,} bytes; a rubric file is at most {MAX_BYTES:,}")
        document = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: not a readable YAML rubric ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(
            f"{path}: field 'format' must be {FORMAT!r} (write it with `annotate rubric export`)"
        )
    content = document.get("rubric")
    if not isinstance(content, dict):
        raise InputError(f"{path}: field 'rubric' must hold the rubric's content")
    unknown = sorted(map(str, set(content) - {"name", "labels", *SPEC_KEYS}))
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
