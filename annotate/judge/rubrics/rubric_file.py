"""The rubric file's format: `annotate rubric export` writes it, `annotate rubric import` and the
runtime check (annotate.check) read it. Safe YAML without aliases, a size limit and the format
tag; no store, so a production app can read a rubric without the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from annotate.errors import InputError

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


def dump_document(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def read_document(path: Path | str) -> dict[str, Any]:
    """The exported document in `path`; InputError naming the file, the field and the fix."""
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
    return document
