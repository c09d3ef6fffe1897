"""pyarrow's question whether a list is a pandas object, answered without importing pandas.

The first time pyarrow builds an array from Python values it imports pandas, only to ask
whether the values are a pandas Series (0.35-0.5 s and 40 MB; once a process). A command
that never makes a DataFrame (an import, a sample drawn in place) pays it for nothing.
`settle()` answers the question first, with pandas refused for that one probe: pyarrow
then asks no more. Every process that opens a store settles it (annotate.store.open_store).
The answer is corrected the moment anything in the process imports pandas itself (a
report, a page): pandas' loader then tells pyarrow, which from there on converts pandas
objects as it always does (without it, `pa.array(Series([1.0, None]))`
would read the NaN as a number, not a null).

A process that has imported pandas already is left alone. The app has not, before its first
page that needs it (Streamlit does not import it at start), and runs its sessions in threads:
only the probing thread is refused, and the watcher is in place before the probe, so a page
importing pandas meanwhile gets it, and pyarrow is told.
The import's reader processes (annotate.ingest.reader_process) refuse pandas for their
whole life with `Refused`.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from contextlib import suppress
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

import pyarrow

_LOCK = threading.Lock()
_SETTLED = False


class Refused(importlib.abc.MetaPathFinder):
    """pandas, not found: to one thread (`thread`, its ident), or to every one (None)."""

    def __init__(self, thread: int | None = None) -> None:
        self.thread = thread

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if self.thread is not None and threading.get_ident() != self.thread:
            return
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"{name} is not imported here", name=name)


def settle() -> None:
    """Answer pyarrow's pandas question with "none" unless pandas is loaded; idempotent.
    Call before building Arrow arrays from Python values."""
    global _SETTLED
    if _SETTLED or "pandas" in sys.modules:
        return
    with _LOCK:
        if _SETTLED or "pandas" in sys.modules:
            return
        sys.meta_path.insert(0, _Watch())  # first: a thread importing pandas meanwhile tells too
        refused = Refused(threading.get_ident())
        sys.meta_path.insert(0, refused)
        try:
            pyarrow.array([None])  # pyarrow's one try at importing pandas: refused
        finally:
            sys.meta_path.remove(refused)
        _SETTLED = True


class _Watch(importlib.abc.MetaPathFinder):
    """Waits for pandas' own import, then steps aside with its loader wrapped."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name != "pandas":
            return None
        with suppress(ValueError):  # gone already
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _TellPyarrow(spec.loader)  # type: ignore[assignment]
        return spec


class _TellPyarrow:
    """pandas' loader, which tells pyarrow once pandas is loaded."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        pyarrow.lib._pandas_api.pd  # noqa: B018  # imports it again, found: sets pyarrow's flags
