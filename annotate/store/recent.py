"""Values read from a store and kept for the process until the store moves: the last few, by
store file, a change mark and the read's own inputs (the evidence, the rates' frame)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from annotate.store import Store


class Recent:
    """The last `size` values read, by key; shared by the process's threads. One read per key
    at a time: a thread asking for a value another is reading waits for it (a frame read ahead
    by widgets/ahead.py is not read a second time by the page that arrives during it)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._reading: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def _kept(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return True, self._values[key]
        return False, None

    def get(self, key: Hashable, read: Callable[[], Any]) -> Any:
        """The value kept for `key`, else `read()`, kept."""
        found, value = self._kept(key)
        if found:
            return value
        with self._lock:
            reading = self._reading.setdefault(key, threading.Lock())
        with reading:
            found, value = self._kept(key)  # read by the thread this one waited for
            if found:
                return value
            try:
                value = read()
                with self._lock:
                    self._values[key] = value
                    while len(self._values) > self.size:
                        self._values.popitem(last=False)
            finally:
                with self._lock:
                    self._reading.pop(key, None)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


def where(store: Store, mark: Callable[[Store], tuple[Any, ...]]) -> tuple[Any, ...] | None:
    """(store file, `mark(store)`): the first part of a kept value's key. None where nothing
    may be kept: an in-memory store (two of them share a path) or inside a transaction (its
    writes are not yet everyone's)."""
    if store.path in ("", ":memory:") or store.in_transaction:
        return None
    return (str(store.path), mark(store))
