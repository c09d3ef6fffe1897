"""Throughput of importing a generated JSONL file, against a bare DuckDB read_json of it.

Two files: the mixed one (string and object contexts, claims and judge verdicts on some rows),
sized by ANNOTATE_BENCH_SMALL (default 100,000 traces), and a homogeneous export (every row
shaped the same, as a production export is), sized by ANNOTATE_BENCH_HOMOGENEOUS (default
200,000). Each side opens a fresh database file, loads the whole file and closes it, so both
end with the data on disk. The baseline runs first, so the import also pays for the imports
(pyarrow's of pandas) the first run in a process makes, as `annotate import` does.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import duckdb

from annotate.ingest import read_records
from annotate.ingest.importer import import_traces
from annotate.store import open_store
from annotate.traces import Record, parse_record
from tests.bench.figures import bench_size, file_size, show
from tests.bench.synthetic import write_jsonl

DEFAULT_SIZE = 100_000
DEFAULT_HOMOGENEOUS = 200_000


def time_import(path: Path, db: Path) -> float:
    """Seconds for open_store + import_traces + close, like one `annotate import`."""
    started = time.perf_counter()
    store = open_store(db)
    report = import_traces(store, path, fmt="jsonl")
    store.close()
    elapsed = time.perf_counter() - started
    if not report.is_clean or report.duplicates:
        raise RuntimeError(f"the generated file did not import cleanly: {report.counts()}")
    return elapsed


def time_parse(path: Path) -> float:
    """Seconds to read and validate every row without touching a store."""
    started = time.perf_counter()
    with path.open("rb") as fh:
        for item in read_records(fh, "jsonl"):
            if isinstance(item, Record):
                parse_record(item)
    return time.perf_counter() - started


def time_read_json(path: Path, db: Path) -> float:
    """Seconds for DuckDB alone to load the same file into a table of a fresh file."""
    started = time.perf_counter()
    conn = duckdb.connect(str(db))
    conn.execute(
        "CREATE TABLE raw AS SELECT * FROM read_json(?, format='newline_delimited')", [str(path)]
    )
    conn.close()
    return time.perf_counter() - started


def run() -> None:
    measure("mixed", bench_size("ANNOTATE_BENCH_SMALL", DEFAULT_SIZE), homogeneous=False)
    measure(
        "homogeneous",
        bench_size("ANNOTATE_BENCH_HOMOGENEOUS", DEFAULT_HOMOGENEOUS),
        homogeneous=True,
    )


def measure(kind: str, count: int, homogeneous: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        path = Path(tmp) / "traces.jsonl"
        started = time.perf_counter()
        size = write_jsonl(path, count, homogeneous=homogeneous)
        show(
            f"generated {count:,} {kind} traces: {file_size(size)} "
            f"in {time.perf_counter() - started:.1f} s"
        )
        bare = time_read_json(path, Path(tmp) / "bare.duckdb")
        ours = time_import(path, Path(tmp) / "store.duckdb")
        parse = time_parse(path)
    show(
        f"import {count:,} {kind} traces: {count / ours:,.0f} traces/s ({ours:.1f} s); "
        f"duckdb read_json: {bare:.1f} s; ratio {ours / bare:.1f}x"
    )
    show(
        f"  of which read + validate without a store: {parse:.1f} s ({parse / ours:.0%}); "
        f"the rest (hashing, store lookups and inserts): {ours - parse:.1f} s"
    )
