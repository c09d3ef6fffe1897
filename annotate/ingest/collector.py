"""Python's cyclic garbage collector, paused while a file's rows stream into the store.

An import makes and drops millions of small objects (decoded rows, dicts, dataclasses)
that hold no reference cycles: reference counting frees each one as soon as its batch is
stored. The cyclic collector would still walk them all, again and again: paused, a
200,000-trace import takes 0.77-0.83x the time, a mixed 100,000-trace one 0.86-0.92x
(bench_import_speed prints the import with and without the pause). Memory is the same
(a 1,000,000-trace import peaks at 504 MB, 506 MB before): nothing an import makes waits
for the collector.

The collector is the process's, so the pause is counted: two imports in one process (two
sessions of the app) leave it paused until the last one ends, and it comes back only if
it was running before the first. An explicit `gc.collect()` (Streamlit's after a rerun)
still collects during a pause.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_PAUSES = 0
_WAS_ENABLED = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block (counted across threads), as it was after."""
    global _PAUSES, _WAS_ENABLED
    with _LOCK:
        if _PAUSES == 0:
            _WAS_ENABLED = gc.isenabled()
            gc.disable()
        _PAUSES += 1
    try:
        yield
    finally:
        with _LOCK:
            _PAUSES -= 1
            if _PAUSES == 0 and _WAS_ENABLED:
                gc.enable()
