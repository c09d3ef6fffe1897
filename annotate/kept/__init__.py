"""Values kept for the process, by key, and shared by its threads: the last few read (or as
many as a budget holds), one read per key at a time. The store's recent reads (the evidence,
the rates' frame: annotate.store.recent) and a bootstrap's resamples (annotate.stats.resamples)
are kept here. Imports only the standard library: the store and the statistics both use it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")


def beside(pool: Executor, work: Callable[..., T], *args: Any) -> Future[T]:
    """`pool.submit(work, *args)`, or, once the pool takes no more work (the interpreter is
    shutting down: concurrent.futures stops every pool before the app's daemon threads end),
    `work(*args)` run here, its outcome in a finished Future. Work started beside the caller
    is an optimisation, never a reason for the caller to fail."""
    try:
        return pool.submit(work, *args)
    except RuntimeError:  # "cannot schedule new futures after (interpreter) shutdown"
        done: Future[T] = Future()
        try:
            done.set_result(work(*args))
        except BaseException as error:  # noqa: BLE001 - raised by result(), as from the pool
            done.set_exception(error)
        return done


class Recent:
    """The last values read, by key, up to `size` in all: each value counts `cost(value)`
    (1 without `cost`); a value costing more than `size` is returned, not kept. One read per
    key at a time: a thread asking for a value another is reading waits for it (a frame or a
    draw made ahead is not made a second time by the caller that arrives during it)."""

    def __init__(self, size: int, cost: Callable[[Any], int] | None = None) -> None:
        self.size = size
        self._cost = cost or (lambda _: 1)
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._reading: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def busy(self, key: Hashable) -> bool:
        """Whether `key` is kept or being read."""
        with self._lock:
            return key in self._values or key in self._reading

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
                self._keep(key, value)
            finally:
                with self._lock:
                    self._reading.pop(key, None)
        return value

    def _keep(self, key: Hashable, value: Any) -> None:
        if self._cost(value) > self.size:
            return
        with self._lock:
            self._values[key] = value
            while sum(map(self._cost, self._values.values())) > self.size:
                self._values.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
