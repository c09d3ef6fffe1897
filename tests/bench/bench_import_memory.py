"""Peak memory of importing a large generated JSONL file, in a subprocess of its own (with
its reader processes: the peak of their RSS and its together, sampled every 20 ms).

Sized by ANNOTATE_BENCH_LARGE (default 1,000,000 traces). The baseline is a process
that imports the same libraries and opens a fresh store but imports no traces. The same
import runs three times: as `annotate import` does (the store's memory limit,
ANNOTATE_MEMORY_LIMIT, default 512MB, of which the rows stream within half until the
commit); streaming within the whole limit, as before bulk transactions; and under DuckDB's
own default (80% of the machine's memory), as before the limit existed; and, as the
baseline of the reader processes, the import reading its rows itself.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.figures import OWN_PEAK, bench_size, child_result, file_size, megabytes, show
from tests.bench.synthetic import write_jsonl

DEFAULT_SIZE = 1_000_000
MARKS = (0.25, 0.5, 0.75)

# Runs in a fresh interpreter so its peak RSS is the import's alone. Prints one JSON line.
_CHILD = (
    OWN_PEAK
    + """
import json, sys, time
import duckdb, pyarrow
from annotate.ingest.importer import import_traces
from annotate.store import open_store

def rss(field="VmRSS:"):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0

mode, path, db, marks = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
seen = {}
def progress(rows, fraction):
    for mark in marks:
        if fraction >= mark and str(mark) not in seen:
            seen[str(mark)] = [rows, rss()]
            break  # a small file passes several marks in one batch: record it once

if mode == "whole":  # as before bulk transactions: the rows stream within the whole limit
    import annotate.store
    annotate.store.streaming_size = lambda size, beside=0: size
started = time.perf_counter()
store = open_store(db)
imported, readers = 0, []
if mode in ("import", "whole"):
    report = import_traces(store, path, fmt="jsonl", progress=progress)
    imported, readers = report.imported, report.readers_peak_rss
    seen["end"] = [imported, rss()]
store.close()
print(json.dumps({
    "peak": own_peak(),
    "seconds": time.perf_counter() - started,
    "imported": imported,
    "readers": readers,
    "marks": seen,
}))
"""
)


def measure(
    mode: str, path: Path, db: Path, limit: str | None = None, readers: str | None = None
) -> dict[str, Any]:
    """Run the child in `mode` (baseline or import) and return what it printed, with `tree`:
    the peak of its RSS and its reader processes' together. `readers`: how many reader
    processes the import starts (ANNOTATE_IMPORT_READERS; None: its default)."""
    env = {**os.environ, **({"ANNOTATE_MEMORY_LIMIT": limit} if limit else {})}
    if readers is not None:
        env["ANNOTATE_IMPORT_READERS"] = readers
    tree: list[int] = []
    found = child_result(
        _CHILD, mode, str(path), str(db), json.dumps(MARKS), what=mode, env=env, tree=tree
    )
    return {**found, "tree": tree[0]}


def processes(result: dict[str, Any]) -> str:
    """The import's peak RSS, with its reader processes' when it had some."""
    if not result["readers"]:
        return f"peak RSS {megabytes(result['peak'])} (no reader process)"
    readers = " + ".join(megabytes(peak) for peak in result["readers"])
    return (
        f"peak RSS of the import's processes together {megabytes(result['tree'])} (sampled "
        f"every 20 ms; the import's own peak {megabytes(result['peak'])}, its "
        f"{len(result['readers'])} reader processes' {readers})"
    )


def describe_marks(marks: dict[str, list[int]]) -> str:
    return ", ".join(f"{rows:,} rows {megabytes(rss)}" for rows, rss in marks.values())


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_LARGE", DEFAULT_SIZE)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        path = Path(tmp) / "traces.jsonl"
        started = time.perf_counter()
        size = write_jsonl(path, count)
        show(
            f"generated {count:,} traces: {file_size(size)} in {time.perf_counter() - started:.1f} s"
        )
        baseline = measure("baseline", path, Path(tmp) / "empty.duckdb")
        result = measure("import", path, Path(tmp) / "store.duckdb")
        store_size = (Path(tmp) / "store.duckdb").stat().st_size
        alone = measure("import", path, Path(tmp) / "alone.duckdb", readers="0")
        whole = measure("whole", path, Path(tmp) / "whole.duckdb")
        unlimited = measure("import", path, Path(tmp) / "unlimited.duckdb", duckdb_default())
    if result["imported"] != count:
        raise RuntimeError(f"imported {result['imported']:,} of {count:,} generated traces")
    show(
        f"import {count:,} traces: {processes(result)} (baseline process "
        f"{megabytes(baseline['peak'])}), file {file_size(size)}, {result['seconds']:.0f} s "
        f"({count / result['seconds']:,.0f} traces/s)"
    )
    show(
        f"same import reading its rows itself (ANNOTATE_IMPORT_READERS=0): {processes(alone)}, "
        f"{alone['seconds']:.0f} s"
    )
    show(f"  RSS during the import: {describe_marks(result['marks'])}")
    show(f"  store file after the import: {file_size(store_size)}")
    show(
        f"same import streaming within the whole limit, not half of it until the commit (as "
        f"before bulk transactions): {processes(whole)}, {whole['seconds']:.0f} s; the bulk "
        f"transaction's peak is {result['tree'] / whole['tree']:.2f}x that, its time "
        f"{result['seconds'] / whole['seconds']:.2f}x"
    )
    show(f"  RSS during that import: {describe_marks(whole['marks'])}")
    show(
        f"same import with DuckDB's default memory limit ({duckdb_default()}): "
        f"{processes(unlimited)}, {unlimited['seconds']:.0f} s; with the store's limit the "
        f"peak is {result['tree'] / unlimited['tree']:.2f}x that"
    )
    show(f"  RSS during that import: {describe_marks(unlimited['marks'])}")


def duckdb_default() -> str:
    """80% of the machine's memory, DuckDB's own default limit."""
    with open("/proc/meminfo") as fh:
        kilobytes = int(fh.readline().split()[1])
    return f"{int(kilobytes * 0.8 / 1024)}MB"
