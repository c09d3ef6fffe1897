"""Values read from a store and kept for the process until the store moves: the last few, by
store file, a change mark and the read's own inputs (the evidence, the rates' frame), in an
annotate.kept.Recent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotate.store import Store


def may_keep(store: Store) -> bool:
    """Whether a value read from `store` may be kept: not from an in-memory store (two of them
    share a path) nor inside a transaction (its writes are not yet everyone's)."""
    return store.path not in ("", ":memory:") and not store.in_transaction


def where(store: Store, mark: Callable[[Store], tuple[Any, ...]]) -> tuple[Any, ...] | None:
    """(store file, `mark(store)`): the first part of a kept value's key; None where nothing
    may be kept (may_keep)."""
    return (str(store.path), mark(store)) if may_keep(store) else None
