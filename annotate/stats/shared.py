"""Values computed once within a block of work (a report: calibration, then agreement on the
same traces), held in a context variable and dropped when the outermost block ends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any


@contextmanager
def sharing(held: ContextVar[dict[Any, Any] | None]) -> Iterator[None]:
    """Inside this block `held` is one dict for every reader; a nested block uses the outer's."""
    if held.get() is not None:
        yield
        return
    token = held.set({})
    try:
        yield
    finally:
        held.reset(token)
