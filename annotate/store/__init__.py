"""The DuckDB store: opening the one file, migrations, transactions and error translation.

Every SQL statement of the product lives in this package. duckdb errors never leave
it: they are re-raised as StoreError (or StoreLockedError when another process
holds the file). The bottom layer: may import only traces/ and errors.
"""

from __future__ import annotations

import ctypes
import gc
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from annotate.errors import Interrupted, StoreError, StoreLockedError, UsageError
from annotate.store.schema import MIGRATIONS
from annotate.traces import pandas_probe

DEFAULT_DB = Path("data") / "annotate.duckdb"
# DuckDB's own default is 80% of the machine's memory: a big import or query would take it.
# Past the limit DuckDB spills to a temporary file beside the store instead of growing.
DEFAULT_MEMORY_LIMIT = "512MB"
# What DuckDB may keep cached after a large write (`Store.release_memory`). 16MB kept 15 MB, a
# third of what the app still held a minute after a 100k-trace page import (issue 36). DuckDB
# evicts every block it can on the way down, so a floor it cannot reach (an index held in
# memory, another session's query) still leaves no cache.
RELEASE_FLOOR = "1MB"
# Fewer traces than this leave little cached (6,000 left 22 MB), and the release's full garbage
# collection costs more than that gives back: it was a tenth of the test suite's time.
RELEASE_AFTER = 5_000
# A memory size: 512MB, 2GB, 1GiB.
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT])(i?)B", re.IGNORECASE)
# Stores (by path) whose process has an import streaming: the part of the memory limit it
# streams within, as an error message says it.
_STREAMING: dict[str, str] = {}
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")


def quoted(identifier: str) -> str:
    """An SQL identifier as a quoted name, whatever it holds."""
    return '"' + identifier.replace('"', '""') + '"'


def id_batch(trace_ids: Iterable[str]) -> dict[str, np.ndarray]:
    """Distinct trace ids as a `_batch` for `Store.fetch_with_batch`: a dict of numpy arrays,
    which DuckDB scans as it is. (A pyarrow table made pyarrow import pandas, ~0.15 s, in
    commands and pages that need no pandas.)"""
    return {"trace_id": np.array(list(dict.fromkeys(trace_ids)), dtype=object)}


def resolve_db_path(path: str | os.PathLike[str] | None = None) -> Path:
    """--db wins, then ANNOTATE_DB, then data/annotate.duckdb."""
    if path:
        return Path(path)
    env = os.environ.get("ANNOTATE_DB")
    return Path(env) if env else DEFAULT_DB


class Store:
    """A connection (one per process) or a cursor of it (one per session or thread)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, path: str) -> None:
        self.conn = conn
        self.path = path
        self._in_transaction = False
        # One cursor may still be asked for work from two threads: Streamlit starts a
        # session's rerun while the interrupted run is winding down. duckdb refuses a busy
        # cursor instead of waiting, so calls on one Store take turns.
        self._lock = threading.RLock()

    def session(self) -> Store:
        """A cursor for one browser session or thread; shares the process's connection."""
        return Store(self.conn.cursor(), self.path)

    def close(self) -> None:
        self.conn.close()

    def _run(self, sql: str, params: Sequence[Any] | None) -> list[tuple[Any, ...]]:
        # Always drain: duckdb 2.0 refuses new work on a cursor with an unfinished result.
        with self._lock:
            return self._run_locked(sql, params)

    def _run_locked(self, sql: str, params: Sequence[Any] | None) -> list[tuple[Any, ...]]:
        try:
            result = (
                self.conn.execute(sql, params) if params is not None else self.conn.execute(sql)
            )
            return result.fetchall()
        except duckdb.Error as exc:
            raise self._failed(exc) from exc
        except RuntimeError as exc:  # Ctrl-C during a COMMIT: duckdb's plain RuntimeError
            if "interrupted" not in str(exc).lower():
                raise
            raise Interrupted(f"{self.path}: interrupted during {sql.split()[0]}") from exc

    def _failed(self, exc: duckdb.Error) -> StoreError | Interrupted:
        """duckdb's error as ours; running out of the memory limit says how to raise it."""
        text = str(exc)
        if isinstance(exc, duckdb.InterruptException):  # Ctrl-C while DuckDB worked
            return Interrupted(f"{self.path}: interrupted; the step in progress was rolled back")
        if isinstance(exc, duckdb.OutOfMemoryException) or "failed to pin block" in text:
            first = text.splitlines()[0] if text else type(exc).__name__
            limit = memory_limit()
            if self.path in _STREAMING:  # any session's import: the limit is the database's
                limit = _STREAMING[self.path]
            return StoreError(
                f"{self.path}: the store ran out of its memory limit ({limit}), so "
                "nothing of this operation was stored; run it again with a larger limit, for "
                f"example ANNOTATE_MEMORY_LIMIT=2GB ({first})"
            )
        return StoreError(f"{self.path}: {exc}")

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        self._run(sql, params)

    def fetchall(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return self._run(sql, params)

    def fetchone(self, sql: str, params: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        rows = self._run(sql, params)
        return rows[0] if rows else None

    def fetch_dicts(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return self._fetch_dicts_locked(sql, params)

    def _fetch_dicts_locked(self, sql: str, params: Sequence[Any] | None) -> list[dict[str, Any]]:
        try:
            result = (
                self.conn.execute(sql, params) if params is not None else self.conn.execute(sql)
            )
            names = [column[0] for column in result.description or []]
            return [dict(zip(names, row, strict=True)) for row in result.fetchall()]
        except duckdb.Error as exc:
            raise self._failed(exc) from exc

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        row = self.fetchone(sql, params)
        return row[0] if row else None

    def fetch_arrow(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """The result as a pyarrow Table (bulk reads: exports, the auditor bundle)."""
        with self._lock:
            try:
                return self.conn.sql(sql, params=list(params) if params else None).to_arrow_table()
            except duckdb.Error as exc:
                raise self._failed(exc) from exc

    def insert_arrow(self, table: str, columns: Sequence[str], data: Any) -> None:
        """Bulk insert an Arrow table; `table` comes from a closed set of names. The column
        names are quoted: they may come from a file (an auditor bundle's Parquet)."""
        names = ", ".join(quoted(column) for column in columns)
        self.fetch_with_batch(f"INSERT INTO {table} ({names}) SELECT {names} FROM _batch", data)

    def fetch_with_batch(
        self, sql: str, data: Any, params: Sequence[Any] | None = None
    ) -> list[tuple[Any, ...]]:
        """Run SQL that reads the Arrow table `data` as `_batch`.

        A DuckDB replacement scan of a local variable, not conn.register(): inside an open
        transaction duckdb 2.0 keeps every registered table alive until COMMIT, which made
        a 1,000,000-trace import hold every batch in memory.
        """
        _batch = data  # noqa: F841 - read by name from the SQL, in this frame
        with self._lock:
            try:
                if params is not None:
                    return self.conn.execute(sql, params).fetchall()
                return self.conn.execute(sql).fetchall()
            except duckdb.Error as exc:
                raise self._failed(exc) from exc

    def fetch_arrow_with_batch(
        self, sql: str, data: Any, params: Sequence[Any] | None = None
    ) -> Any:
        """fetch_with_batch's result as a pyarrow Table (a million rows without Python tuples)."""
        _batch = data  # noqa: F841 - read by name from the SQL, in this frame
        with self._lock:
            try:
                return self.conn.sql(sql, params=list(params) if params else None).to_arrow_table()
            except duckdb.Error as exc:
                raise self._failed(exc) from exc

    @contextmanager
    def transaction(self, bulk: bool = False, beside: int = 0) -> Iterator[Store]:
        """All or nothing; nested use joins the outer transaction; other threads wait.

        `bulk` (a whole file's import): until the commit, DuckDB works within half the
        memory limit. What it holds then can spill (the rows written so far, scans); the
        commit's merge into the indexes cannot, so the commit gets the whole limit back.
        The process then peaks lower, because the evictable buffers no longer fill the limit
        before the commit needs it: a 1,000,000-trace import at 512MB, 506 MB instead of
        766 MB (with migration 0014's fewer indexes; bench_import_memory). The setting is the database's, so the process's other sessions
        work within the half too while the import streams. `beside`: the bytes the import's
        other processes hold meanwhile (its reader processes, annotate.ingest.reader_process),
        which the half gives up, down to a quarter of the limit. Nested in another
        transaction, `bulk` changes nothing: the outer one decides."""
        with self._lock:
            if self._in_transaction:
                yield self
                return
            self.execute("BEGIN TRANSACTION")
            self._in_transaction = True
            try:
                if bulk:
                    self._limit(memory_limit(), streaming=beside)
                yield self
            except BaseException:
                self._in_transaction = False
                self.conn.execute("ROLLBACK").fetchall()
                raise
            finally:  # after a rollback, before a commit: the whole limit again
                if bulk:
                    self._limit(memory_limit())
            self._in_transaction = False
            self.execute("COMMIT")

    @property
    def in_transaction(self) -> bool:
        """Whether this cursor is inside `transaction()`: what it reads may not be committed."""
        return self._in_transaction

    def release_memory(self) -> None:
        """Give back what a large write left cached (a 100k-trace import left ~300 MB): DuckDB
        evicts its buffer pool down to a briefly lowered limit, and glibc hands freed heap
        back to the system. The limit is the database's: other sessions' queries only
        re-read from disk what they need. Inside a transaction (an import that joined a
        caller's) nothing is released: a failed SET would abort the caller's transaction, and
        what it holds is not cache until it commits."""
        if self._in_transaction:
            return
        gc.collect()
        try:  # best effort, after the import's commit: a failure here must not fail the import
            self.execute(f"SET memory_limit = '{RELEASE_FLOOR}'")
        except StoreError:
            pass  # DuckDB evicted what it could; the rest (an index, a query's) is not a cache
        finally:
            self.execute(f"SET memory_limit = '{memory_limit()}'")
        _trim_heap()

    def _limit(self, limit: str, streaming: int | None = None) -> None:
        """The whole limit; or, `streaming` given (the bytes beside), an import's part of it."""
        if streaming is None:
            self.execute(f"SET memory_limit = '{limit}'")
            _STREAMING.pop(self.path, None)
            return
        part = streaming_size(limit, streaming)
        self.execute(f"SET memory_limit = '{part}'")
        _STREAMING[self.path] = (
            f"{part}, half of {limit} while an import streams"
            if streaming == 0
            else f"{part} of {limit} while an import streams beside its reader processes"
        )

    def schema_version(self) -> int:
        return int(self.scalar("SELECT count(*) FROM schema_migrations") or 0)


def _trim_heap() -> None:
    """glibc keeps freed memory for reuse; malloc_trim returns it (elsewhere: nothing to do).
    pyarrow's pool (mimalloc) keeps what the import's Arrow batches freed, ~20 MB per 30,000
    traces after the import (issue 36): release_unused hands it back."""
    arrow = sys.modules.get("pyarrow")  # never imported: it holds nothing
    if arrow is not None:
        with suppress(AttributeError):
            arrow.default_memory_pool().release_unused()
    with suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


def memory_limit() -> str:
    """DuckDB's memory limit: ANNOTATE_MEMORY_LIMIT (e.g. 1GB, 800MB), else 512MB."""
    value = os.environ.get("ANNOTATE_MEMORY_LIMIT", "").strip() or DEFAULT_MEMORY_LIMIT
    if not _SIZE.fullmatch(value):  # a setting the user gave: a usage error, exit 2
        raise UsageError(
            f"ANNOTATE_MEMORY_LIMIT={value!r} is not a size; give one like 400MB or 2GB"
        )
    return value


_UNITS = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def streaming_size(size: str, beside: int = 0) -> str:
    """What an import streams within: half the limit, less `beside` bytes (what its other
    processes hold), and at least a quarter ('512MB' -> '256000KB'; beside 240 MB,
    '128000KB')."""
    whole = size_bytes(size)
    return f"{int(max(whole / 2 - beside, whole / 4) // 1000)}KB"


def size_bytes(size: str) -> float:
    """A memory size as memory_limit() gives it, in bytes."""
    match = _SIZE.fullmatch(size.strip())
    if match is None:
        raise StoreError(f"{size!r} is not a size; give one like 400MB or 2GB")
    number, unit, binary = match.groups()
    scale = 1024 ** ("KMGT".index(unit.upper()) + 1) if binary else _UNITS[unit.upper()]
    return float(number) * scale


def open_store(path: str | os.PathLike[str] | None = None, read_only: bool = False) -> Store:
    """Open (creating and migrating if needed) the store; ':memory:' works for tests."""
    db = resolve_db_path(path)
    target = str(db)
    if target != ":memory:":
        db.parent.mkdir(parents=True, exist_ok=True)
    try:
        config: dict[str, str | bool | int | float | list[str]] = {"memory_limit": memory_limit()}
        conn = duckdb.connect(target, read_only=read_only, config=config)
        # no progress bar: DuckDB prints it to stdout after 2 s (into a --json answer)
        conn.execute("SET enable_progress_bar = false")
    except duckdb.IOException as exc:
        raise _translate_open_error(target, exc) from exc
    except duckdb.Error as exc:
        raise StoreError(f"cannot open {target}: {exc}") from exc
    if target != ":memory:" and _in_memory(conn):
        conn.close()
        raise UsageError(
            f"{target} is a data file, not a DuckDB store: DuckDB would read it as a view and "
            "keep nothing written to it. Give --db (or ANNOTATE_DB) a .duckdb file, and "
            "bring the data in with `annotate import`"
        )
    store = Store(conn, target)
    pandas_probe.settle()  # a command that makes no DataFrame never imports pandas
    if not read_only:
        migrate(store)
        from annotate.store.judge_runs import interrupt_dead_runs

        interrupt_dead_runs(store)  # a judge run whose process died reads 'interrupted'
    return store


def _in_memory(conn: duckdb.DuckDBPyConnection) -> bool:
    """DuckDB opens an existing CSV, JSON or Parquet file as an in-memory database holding a
    view of it: the file is read, and every write is lost when the connection closes."""
    row = conn.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    return row is None or row[0] is None


def _translate_open_error(path: str, exc: duckdb.Error) -> StoreError:
    match = _LOCK_HOLDER.search(str(exc))
    if not match:
        return StoreError(f"cannot open {path}: {exc}")
    pid = match.group("pid")
    return StoreLockedError(path, f"PID {pid}: {_process_command(pid) or match.group('exe')}")


def _process_command(pid: str) -> str | None:
    """The holder's command line, so the user knows which window to stop."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:200]


def migrate(store: Store) -> None:
    """Apply every migration not yet recorded, all in one transaction: a store is at one
    version or the next, never between (and a new store's one commit is a quarter of the
    time of a commit a migration)."""
    store.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    applied = {row[0] for row in store.fetchall("SELECT name FROM schema_migrations")}
    pending = [
        (version, name, sql)
        for version, (name, sql) in enumerate(MIGRATIONS, start=1)
        if name not in applied
    ]
    if not pending:
        return
    with store.transaction():
        for version, name, sql in pending:
            store.execute(sql)
            store.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)", [version, name, datetime.now()]
            )
