"""`annotate check`'s stream: JSON Lines of {context, response[, request, id, claims]} in, one
line out per line in, in order. A bad line gets an error line naming its number and field; the
other lines are still checked. Checks run concurrently; output keeps the input's order.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from annotate.check.grounding import GroundingCheck
from annotate.check.material import CheckInputError

FIELDS = ("context", "response", "request", "id", "claims", "response_id")


@dataclass
class Tally:
    checked: int = 0
    rejected: int = 0
    grounded: int = 0
    ungrounded: int = 0
    unknown: int = 0

    def count(self, line: dict[str, Any]) -> None:
        if "error" in line:
            self.rejected += 1
            return
        self.checked += 1
        verdict = line["grounded_answer"]
        if verdict is True:
            self.grounded += 1
        elif verdict is False:
            self.ungrounded += 1
        else:
            self.unknown += 1


def error_line(number: int, field: str, message: str, item_id: Any = None) -> dict[str, Any]:
    return {"line": number, "id": item_id, "field": field, "error": message}


def parsed(raw: bytes | str) -> dict[str, Any]:
    """The line's object, or CheckInputError naming what is wrong with it."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise CheckInputError(
            "", f"not UTF-8 (byte {exc.start + 1}); write the file as UTF-8 JSON Lines"
        ) from None
    try:
        item = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckInputError(
            "", f"not JSON ({exc.msg} at column {exc.colno}); write one object a line"
        ) from None
    if not isinstance(item, dict):
        raise CheckInputError("", 'not a JSON object: write {"context": ..., "response": ...}')
    return item


def check_line(check: GroundingCheck, number: int, text: bytes | str) -> dict[str, Any]:
    item: dict[str, Any] = {}
    try:
        item = parsed(text)
        for name in ("context", "response"):
            if name not in item:
                raise CheckInputError(name, "is missing; each line needs {context, response}")
        result = check.check(
            item["response"], item["context"], item.get("request"), claims=item.get("claims"),
            id=item.get("id"), response_id=item.get("response_id"),
        )  # fmt: skip
    except CheckInputError as exc:
        return error_line(number, exc.field, f"line {number}: {exc}", item.get("id"))
    return {"line": number, **result.as_json()}


def check_lines(
    check: GroundingCheck, lines: Iterable[bytes | str], concurrency: int = 8
) -> Iterator[dict[str, Any]]:
    """One output line per non-blank input line, in input order, `concurrency` at a time."""
    pending: deque[Future[dict[str, Any]]] = deque()
    with ThreadPoolExecutor(concurrency, thread_name_prefix="check-line") as pool:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            pending.append(pool.submit(check_line, check, number, text))
            while len(pending) >= 2 * concurrency:  # bounded: a huge file is streamed
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
