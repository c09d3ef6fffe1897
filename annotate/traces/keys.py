"""The keys a row's nested objects (context items, claims, judge verdicts) may hold, and a
warning for each other key: it is ignored, so a typo (`soruce`) must not pass without a word.

Pure: no I/O. Unknown top-level keys are not this module's: they become attributes.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from annotate.errors import counted

CONTEXT_KEYS = ("source", "text")
CLAIM_KEYS = ("text", "start", "end")
VERDICT_KEYS = ("judge", "level", "claim", "label", "score", "explanation", "ratings")
# row field -> (what one of its objects is called, the keys a parser reads, in the README's order)
_NESTED = {
    "context": ("context item", CONTEXT_KEYS),
    "claims": ("claim", CLAIM_KEYS),
    "judge": ("judge verdict", VERDICT_KEYS),
}
_KNOWN = {name: frozenset(keys) for name, (_noun, keys) in _NESTED.items()}
_KEY_CHARS = 60  # a key quoted in a field path: a huge one stays readable


def unknown_keys(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, warning) for each unknown key of the row's nested objects, once per key and
    field: `context[0].soruce`, the later objects holding it counted in the message.

    A key whose value is null is not reported: nothing was dropped. Any shape is taken (a
    rejected row's too); what is not an object holds no keys to report."""
    found: list[tuple[str, str]] = []
    for name, known in _KNOWN.items():
        items = data.get(name)
        if type(items) is list:  # the usual row: one C-level subset test per object
            try:
                if all(map(known.issuperset, items)) or _only_known(known, items):
                    continue
            except TypeError:  # an object of a rejected row holds an unhashable value
                pass
        elif items is None or type(items) is str:
            continue
        elif name == "judge" and _is_mapping(items):  # one verdict stands for a list of one
            items = [items]
        elif not isinstance(items, tuple):
            continue
        found.extend(_field_warnings(name, known, items))
    return found


def _only_known(known: frozenset[str], items: list[Any]) -> bool:
    """Every object's keys are known; a string (a context item) holds none."""
    for item in items:
        if type(item) is not str and not (type(item) is dict and item.keys() <= known):
            return False
    return True


def _field_warnings(
    name: str, known: frozenset[str], items: list[Any] | tuple[Any, ...]
) -> list[tuple[str, str]]:
    places: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        if not _is_mapping(item):
            continue
        for key, value in item.items():
            if key not in known and value is not None:
                places.setdefault(str(key), []).append(index)
    return [
        (f"{name}[{indexes[0]}].{_quoted(key)}", _message(name, key, len(indexes) - 1))
        for key, indexes in places.items()
    ]


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _quoted(key: str) -> str:
    return key if len(key) <= _KEY_CHARS else key[: _KEY_CHARS - 1] + "…"


def _message(name: str, key: str, more: int) -> str:
    noun, keys = _NESTED[name]
    nearest = difflib.get_close_matches(key.lower(), keys, n=1)
    fix = (
        f'did you mean "{nearest[0]}"?'
        if nearest
        else "to keep the value, move it to the row's attributes"
    )
    where = f", here and in {counted(more, 'other ' + noun)} of this row" if more else ""
    return f"is not a field of a {noun} ({', '.join(keys)}) and was ignored{where}; {fix}"
