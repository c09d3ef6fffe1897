"""The comparisons of verify-bundle: a bundle's rates.json params checked before they are
used, and its readable files and rates against those made again from its tables.

Explanations written for people (a row's reason, a note, a verdict) may be worded otherwise
by another version of annotate: when only they differ, the bundle passes with a note. The
figures, states, slices and the number of flags raised may not differ: each that does is named
with its value in the file and the one the tables give. Only a hash says a file was changed
after export; a recomputed number that differs says just that.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from annotate.rates.estimate import LEVELS

PROSE = frozenset({"reason", "note", "notes", "flags", "verdict"})
TABLES = "from the bundle's tables"
SHOWN = 3  # differences named per file; the rest are counted
ABSENT = object()  # a key one side has and the other has not


def _whole(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


PARAMS = {
    "sample": lambda v: isinstance(v, str),
    "by": lambda v: isinstance(v, list) and all(isinstance(c, str) for c in v),
    "levels": lambda v: isinstance(v, list) and bool(v) and all(x in LEVELS for x in v),
    "judge": lambda v: v is None or isinstance(v, str),
    "threshold": lambda v: (
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 1
    ),
    "resamples": lambda v: _whole(v, 1, 100_000),
    "seed": lambda v: _whole(v, 0, 2**63 - 1),
}


def params_problem(stored: Any) -> str | None:
    """Why rates.json cannot be recomputed as it stands (a value annotate never writes)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("rows"), list):
        return "rates.json: holds no list of rows"
    params = stored.get("params")
    wrong = [k for k, ok in PARAMS.items() if not isinstance(params, dict) or k not in params
             or not ok(params[k])]  # fmt: skip
    if wrong:
        named = ", ".join(f"params.{k}" for k in wrong)
        return f"rates.json: {named}: missing, or a value annotate never computes rates with"
    return None


def facts(document: Any) -> Any:
    """The document without its explanations; a slice is kept whole whatever its columns are
    called, and flags count (a flag removed is a change, a flag reworded is not)."""
    if isinstance(document, dict):
        return {
            k: v if k == "slice" else len(v) if k == "flags" and isinstance(v, list) else facts(v)
            for k, v in document.items()
            if k not in PROSE or k == "flags"
        }
    if isinstance(document, list):
        return [facts(v) for v in document]
    return document


def _item(entry: Any, index: int) -> str:
    """How a list entry is named: by its slice, its reviewer pair or reviewer, else its place."""
    if isinstance(entry, dict) and isinstance(entry.get("slice"), dict):
        return "[" + (", ".join(f"{k}={v}" for k, v in entry["slice"].items()) or "all") + "]"
    if isinstance(entry, dict) and {"a", "b"} <= entry.keys():
        return f"[{entry['a']} and {entry['b']}]"
    if isinstance(entry, dict) and isinstance(entry.get("stratum"), list):
        return "[" + ", ".join(map(str, entry["stratum"])) + "]"
    if isinstance(entry, dict) and "reviewer" in entry:
        return f"[{entry['reviewer']}]"
    return f"[{index + 1}]"


def differences(stored: Any, again: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(where, value in the file, value from the tables) of each figure that differs; a
    statistic's `value` is named by the statistic alone."""
    if isinstance(stored, dict) and isinstance(again, dict):
        for key in dict.fromkeys([*stored, *again]):
            where = path if key == "value" and path else f"{path}.{key}" if path else str(key)
            where += " raised" if key == "flags" else ""  # facts() counts them
            yield from differences(stored.get(key, ABSENT), again.get(key, ABSENT), where)
    elif isinstance(stored, list) and isinstance(again, list) and len(stored) == len(again):
        for index, (one, other) in enumerate(zip(stored, again, strict=True)):
            yield from differences(one, other, path + _item(one, index))
    elif stored != again:
        yield path, stored, again


def _shown(one: Any, other: Any) -> tuple[str, str]:
    """Both values as text, floats with as many decimals as it takes to tell them apart."""
    if isinstance(one, float) and isinstance(other, float) and math.isfinite(one + other):
        digits = next((d for d in range(3, 18) if f"{one:.{d}f}" != f"{other:.{d}f}"), 17)
        return f"{one:.{digits}f}", f"{other:.{digits}f}"
    return tuple(  # type: ignore[return-value]
        "absent" if v is ABSENT else f"{v:.3f}" if isinstance(v, float) else json.dumps(v)
        for v in (one, other)
    )


def named(found: list[tuple[str, Any, Any]], subject: str = "") -> str:
    """The first SHOWN differences in words, and how many more there are."""
    said = []
    for where, one, other in found[:SHOWN]:
        in_file, from_tables = _shown(one, other)
        said.append(f"{where}{subject} is {in_file} in the file, {from_tables} {TABLES}")
    more = len(found) - SHOWN
    return "; ".join(said) + (f"; and {more} more" if more > 0 else "")


def _subject(name: str, document: Any) -> str:
    if name == "calibration.json" and isinstance(document, dict) and document.get("judge"):
        return f" of judge {document['judge']}"
    return ""


def _compare(
    name: str, stored: Any, again: Any, problems: list[str], notes: list[str], version: Any
) -> None:
    """Figures that differ are a problem, each named; the same figures in other words, a note."""
    if stored == again:
        return
    found = list(differences(facts(stored), facts(again)))
    if not found:
        notes.append(
            f"{name}: the same figures; some explanations are worded differently by this "
            f"version of annotate (the bundle was made by {version})"
        )
    else:
        problems.append(f"{name}: {named(found, _subject(name, stored))}")


def _lines(name: str, stored: bytes, again: bytes) -> str:
    """A text file's first differing line, both ways."""
    ours, theirs = stored.decode(errors="replace"), again.decode(errors="replace")
    mine, made = ours.splitlines(), theirs.splitlines()
    for number, (one, other) in enumerate(zip(mine, made, strict=False), start=1):
        if one != other:
            return f"{name}: line {number} is {one!r} in the file, {other!r} {TABLES}"
    return f"{name}: holds {len(mine)} lines, {len(made)} {TABLES}"


def compare_files(
    derived: dict[str, bytes],
    contents: dict[str, bytes],
    problems: list[str],
    notes: list[str],
    version: Any,
) -> None:
    for name, data in derived.items():
        if name not in contents:
            problems.append(f"{name}: missing from the bundle and its manifest")
        elif contents[name] != data and not name.endswith(".json"):
            problems.append(_lines(name, contents[name], data))
        elif contents[name] != data:
            try:
                stored = json.loads(contents[name])
            except ValueError:
                problems.append(f"{name}: not JSON")
                continue
            _compare(name, stored, json.loads(data), problems, notes, version)


def _row_name(index: int, row: Any) -> str:
    if not isinstance(row, dict):
        return f"row {index}"
    cut = row.get("slice")
    where = ", ".join(f"{k}={v}" for k, v in cut.items()) if isinstance(cut, dict) else ""
    parts = [where or "all", *(str(row[k]) for k in ("level", "estimator") if k in row)]
    return f"row {index} ({'; '.join(parts)})"


def compare_rows(
    again: list[Any], stored: list[Any], problems: list[str], notes: list[str], version: Any
) -> None:
    if len(again) != len(stored):
        problems.append(
            f"rates.json: holds {len(stored)} rows, the bundle's tables give {len(again)}"
        )
        return
    found, rows = [], set()
    for index, (a, b) in enumerate(zip(again, stored, strict=True), start=1):
        for where, one, other in differences(facts(b), facts(a)):
            found.append((f"{_row_name(index, b)}: {where}", one, other))
            rows.add(index)
    if found:
        problems.append(
            f"rates.json: the recomputed rates differ from the exported ones in {len(rows)} of "
            f"{len(stored)} rows: {named(found)}"
        )
    else:
        _compare("rates.json", stored, again, problems, notes, version)
