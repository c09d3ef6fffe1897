"""--map FIELD=SOURCE: each SOURCE parsed once into the keys it steps through, and a row's
fields read through the mapping. Owns the quoting rule; the values it finds are checked by
annotate.traces, not here.

A SOURCE is keys separated by dots (`output.text`); a key of digits steps into a list
(`messages.0`). A key in double quotes is one key, dots and all (`"attributes.llm.model_name"`,
`meta."a.b".c`); a key cannot hold a double quote. An unquoted SOURCE that a row holds whole as
one key (a flat column such as Phoenix's `attributes.llm.model_name`) is that key, before it is
read as a path; quoting any key turns that off. A null on the way (JSON null, a Parquet null,
an empty CSV cell, an object above the key that is null) is no value: the field is left empty.
A path the row does not have is that row's error.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from annotate.errors import UsageError
from annotate.traces import KNOWN_FIELDS, RowError

_QUOTING = 'put the key, dots and all, between two double quotes: a."b.c".d'


class SourcePath(str):
    """A SOURCE as written (its text: what messages quote, what `annotate sample` reads as
    columns), with the keys it steps through. Built by source_path."""

    keys: tuple[str, ...]
    quoted: bool  # some key was quoted: the keys are exactly these, never one dotted key

    def __new__(cls, text: str, keys: tuple[str, ...], quoted: bool) -> SourcePath:
        path = super().__new__(cls, text)
        path.keys, path.quoted = keys, quoted
        return path

    def whole_key(self, data: Mapping[str, Any], columns: Collection[str]) -> str | None:
        """The one key this SOURCE is on a row that has it whole (`output` or `a.b`), else None."""
        if len(self.keys) == 1:
            return self.keys[0]
        if not self.quoted and (self in data or self in columns):
            return str(self)
        return None


class _BadSource(ValueError):
    pass


def parse_mapping(pairs: Iterable[str]) -> dict[str, SourcePath]:
    """`response=output.text` pairs into {field: SourcePath}; a bad pair is a UsageError."""
    mapping: dict[str, SourcePath] = {}
    for pair in pairs:
        target, sep, source = pair.partition("=")
        if not sep or not target.strip() or not source.strip():
            raise UsageError(
                f"--map {pair!r} must look like FIELD=SOURCE, for example response=output.text"
            )
        field = target.strip()
        if field not in KNOWN_FIELDS:
            raise UsageError(
                f"--map {pair!r}: {field!r} is not a trace field; map to one of "
                f"{', '.join(KNOWN_FIELDS)}"
            )
        if field in mapping:
            raise UsageError(f"--map names {field!r} twice; keep the one source it comes from")
        mapping[field] = source_path(source.strip(), pair)
    return mapping


def source_paths(mapping: Mapping[str, str]) -> dict[str, SourcePath]:
    """A mapping's sources as SourcePaths: parse_mapping's are kept, plain text (a sample's
    stored source) is parsed here, once per import."""
    return {
        field: source
        if isinstance(source, SourcePath)
        else source_path(source, f"{field}={source}")
        for field, source in mapping.items()
    }


def source_path(text: str, pair: str) -> SourcePath:
    """SOURCE parsed; a quoting mistake is a UsageError naming `pair` (the --map it came in)."""
    try:
        keys, quoted = _split_keys(text)
    except _BadSource as exc:
        raise UsageError(f"--map {pair!r}: {exc}") from None
    return SourcePath(text, keys, quoted)


def _split_keys(text: str) -> tuple[tuple[str, ...], bool]:
    keys: list[str] = []
    quoted = False
    at = 0
    while True:
        if text.startswith('"', at):
            end = text.find('"', at + 1)
            if end < 0:
                raise _BadSource(
                    f"the quote at character {at + 1} of SOURCE is never closed; {_QUOTING}"
                )
            key, at, quoted = text[at + 1 : end], end + 1, True
            if at < len(text) and text[at] != ".":
                raise _BadSource(f"a quote must enclose a whole key; {_QUOTING}")
        else:
            end = text.find(".", at)
            end = len(text) if end < 0 else end
            key, at = text[at:end], end
            if '"' in key:
                raise _BadSource(f"a quote must enclose a whole key; {_QUOTING}")
        if not key:
            raise _BadSource(
                'SOURCE has an empty key (two dots together, a dot at either end, or ""); '
                "write a key between every two dots"
            )
        keys.append(key)
        if at == len(text):
            return tuple(keys), quoted
        at += 1  # past the dot


def apply_mapping(
    data: Any, mapping: Mapping[str, SourcePath], columns: Collection[str] = ()
) -> tuple[Any, list[str]]:
    """The row with each mapped field taken from its source (a top-level key moves; a null
    leaves the field empty), and the fields whose source the row does not have.

    `columns`: a table's columns (CSV header, Parquet schema); one the row lacks was empty."""
    if not mapping or not isinstance(data, dict):
        return data, []
    mapped = dict(data)
    missing: list[str] = []
    for target, source in mapping.items():
        whole = source.whole_key(data, columns)
        found, value = _dig(data, (whole,) if whole is not None else source.keys, columns)
        if not found:
            missing.append(target)
            continue
        if value is None:  # no value: the row's own key of the field's name is not it either
            mapped.pop(target, None)
        else:
            mapped[target] = value
        if whole is not None and whole != target and whole not in mapping:
            mapped.pop(whole, None)  # moved: not kept beside as an unknown key
    return mapped, missing


def _dig(data: Any, keys: tuple[str, ...], columns: Collection[str]) -> tuple[bool, Any]:
    """(found, value): a null on the way is found, with no value; SQL reads a struct so too."""
    if keys[0] not in data and keys[0] in columns:
        return True, None
    for key in keys:
        if data is None:
            return True, None
        if isinstance(data, Mapping) and key in data:
            data = data[key]
        elif (
            isinstance(data, list)
            and key.lstrip("-").isdigit()
            and -len(data) <= int(key) < len(data)
        ):
            data = data[int(key)]
        else:
            return False, None
    return True, data


def missing_source(line: int, unit: str, field: str, source: SourcePath) -> RowError:
    """The error of a row that does not have the source `field` is mapped from."""
    return RowError(
        line,
        field,
        f"is mapped from {str(source)!r}, which this row does not have; correct the path in "
        f"--map {field}={source}, or give the row that key (a key with dots in its name is "
        'written in double quotes: a."b.c")',
        unit,
    )
