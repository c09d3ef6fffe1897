"""The comparisons of verify-bundle: a bundle's rates.json params checked before they are
used, and its readable files and rates against those made again from its tables.

Explanations written for people (a row's reason, a note, a verdict) may be worded otherwise
by another version of annotate: when only they differ, the bundle passes with a note. The
figures, states, slices and the number of flags raised may not differ.
"""

from __future__ import annotations

import json
import math
from typing import Any

from annotate.rates.estimate import LEVELS

PROSE = frozenset({"reason", "note", "notes", "flags", "verdict"})
CHANGED = "differs from what the bundle's tables give (changed after export)"


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
        return "rates.json: holds no list of rows (changed after export)"
    params = stored.get("params")
    wrong = [k for k, ok in PARAMS.items() if not isinstance(params, dict) or k not in params
             or not ok(params[k])]  # fmt: skip
    if wrong:
        named = ", ".join(f"params.{k}" for k in wrong)
        return (
            f"rates.json: {named}: missing, or a value annotate never computes rates with "
            "(changed after export)"
        )
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


def _compare(
    name: str, stored: Any, again: Any, problems: list[str], notes: list[str], version: Any
) -> None:
    """Figures that differ are a problem; the same figures in other words, a note."""
    if stored == again:
        return
    if facts(stored) == facts(again):
        notes.append(
            f"{name}: the same figures; some explanations are worded differently by this "
            f"version of annotate (the bundle was made by {version})"
        )
    else:
        problems.append(f"{name}: {CHANGED}")


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
        elif contents[name] != data:
            try:
                stored = json.loads(contents[name]) if name.endswith(".json") else None
            except ValueError:
                problems.append(f"{name}: not JSON; {CHANGED}")
                continue
            if stored is None:
                problems.append(f"{name}: {CHANGED}")
            else:
                _compare(name, stored, json.loads(data), problems, notes, version)


def compare_rows(
    again: list[Any], stored: list[Any], problems: list[str], notes: list[str], version: Any
) -> None:
    if len(again) != len(stored):
        problems.append(
            f"rates.json: holds {len(stored)} rows, the bundle's tables give {len(again)} "
            "(changed after export)"
        )
    elif facts(again) != facts(stored):
        differ = [i + 1 for i, (a, b) in enumerate(zip(again, stored, strict=True))
                  if facts(a) != facts(b)]  # fmt: skip
        shown = ", ".join(map(str, differ[:10])) + (", ..." if len(differ) > 10 else "")
        problems.append(
            f"rates.json: the recomputed rates differ from the exported ones in "
            f"{len(differ)} of {len(stored)} rows (rows {shown}; changed after export)"
        )
    else:
        _compare("rates.json", stored, again, problems, notes, version)
