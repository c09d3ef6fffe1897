"""Throughput of importing a generated JSONL file, against a bare DuckDB read_json of it.

Two files: the mixed one (string and object contexts, claims and judge verdicts on some rows),
sized by ANNOTATE_BENCH_SMALL (default 100,000 traces), and a homogeneous export (every row
shaped the same, as a production export is), sized by ANNOTATE_BENCH_HOMOGENEOUS (default
200,000). Then the mixed file into a store already holding ANNOTATE_BENCH_LARGE traces
(default 1,000,000), against the same import into an empty store. Each side opens a fresh
database file, loads the whole file and closes it, so both end with the data on disk.

read_json and our import run alternately, ANNOTATE_BENCH_ROUNDS times (default 2), each round
printed with its wall and CPU seconds and the load average: on a machine others share, the
ratio within a round is the figure. The baseline runs first, so the import also pays for the
imports (pyarrow's of pandas) the first run in a process makes, as `annotate import` does.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from unittest.mock import patch

import duckdb

from annotate.ingest import generic, importer
from annotate.ingest.collector import collector_paused
from annotate.store import open_store
from annotate.store.imports import stored_hashes
from annotate.traces import Record, parse_record
from tests.bench.bench_sampling import cached_store
from tests.bench.figures import bench_size, file_size, show
from tests.bench.synthetic import write_jsonl

DEFAULT_SIZE = 100_000
DEFAULT_HOMOGENEOUS = 200_000
DEFAULT_LARGE = 1_000_000
ROUNDS = 2  # ANNOTATE_BENCH_ROUNDS


def time_import(path: Path, db: Path, pause_collector: bool = True) -> float:
    """Seconds for open_store + import_traces + close, like one `annotate import`.
    `pause_collector=False`: the import as it was before it paused Python's cyclic collector
    (annotate.ingest.collector), the same-run baseline of that change."""
    started = time.perf_counter()
    store = open_store(db)
    with patch.object(
        importer, "collector_paused", collector_paused if pause_collector else nullcontext
    ):
        report = importer.import_traces(store, path, fmt="jsonl")
    store.close()
    elapsed = time.perf_counter() - started
    if not report.is_clean or report.duplicates:
        raise RuntimeError(f"the generated file did not import cleanly: {report.counts()}")
    return elapsed


def time_parse(path: Path) -> float:
    """Seconds to read and validate every row without touching a store."""
    started = time.perf_counter()
    with path.open("rb") as fh:  # as the import reads: the decoded path, else parse.py
        for item in generic.read_jsonl_traces(fh):
            if isinstance(item, Record):
                parse_record(item)
    return time.perf_counter() - started


def time_read_json(path: Path, db: Path) -> float:
    """Seconds for DuckDB alone to load the same file into a table of a fresh file."""
    started = time.perf_counter()
    conn = duckdb.connect(str(db))
    conn.execute("SET enable_progress_bar = false")  # its bar went to stdout after 2 s
    conn.execute(
        "CREATE TABLE raw AS SELECT * FROM read_json(?, format='newline_delimited')", [str(path)]
    )
    conn.close()
    return time.perf_counter() - started


# The homogeneous file into the store's own tables by SQL alone: no checks, no error lines,
# an md5 of DuckDB's JSON for the content hash. What loading these four tables and their
# indexes costs before any check of ours: the floor of an import into this schema.
SCHEMA_FLOOR = (
    "CREATE TEMP TABLE r AS SELECT *, row_number() OVER () AS line "
    "FROM read_json(?, format='newline_delimited')",
    "INSERT INTO imports (id, kind, path, format, started_at) "
    "VALUES (1, 'traces', 'bench', 'jsonl', now())",
    "INSERT INTO traces SELECT trace_id, 1, line, md5(CAST(to_json(r) AS VARCHAR)), "
    "CAST(timestamp AS TIMESTAMP), feature, risk_category, model, request, response, true, "
    "CAST(to_json(attributes) AS VARCHAR) FROM r",
    "INSERT INTO contexts SELECT trace_id, generate_subscripts(context, 1) - 1, "
    "unnest(context).source, unnest(context).text FROM r",
    "INSERT INTO claims SELECT trace_id, generate_subscripts(claims, 1) - 1, "
    "unnest(claims).text, unnest(claims).start, unnest(claims).\"end\", 'provided' FROM r",
    "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, score, "
    "explanation, origin, import_id) SELECT trace_id, j.judge, j.level, j.claim, j.label, "
    "j.score, j.explanation, 'import', 1 FROM (SELECT trace_id, unnest(judge) AS j FROM r)",
)


def time_schema_floor(path: Path, db: Path) -> float:
    """Seconds for open_store + SCHEMA_FLOOR in one transaction + close."""
    started = time.perf_counter()
    store = open_store(db)
    with store.transaction():
        store.execute(SCHEMA_FLOOR[0], [str(path)])
        for sql in SCHEMA_FLOOR[1:]:
            store.execute(sql)
    store.close()
    return time.perf_counter() - started


def run() -> None:
    measure("mixed", bench_size("ANNOTATE_BENCH_SMALL", DEFAULT_SIZE), homogeneous=False)
    measure(
        "homogeneous",
        bench_size("ANNOTATE_BENCH_HOMOGENEOUS", DEFAULT_HOMOGENEOUS),
        homogeneous=True,
    )
    measure_into_large(
        bench_size("ANNOTATE_BENCH_SMALL", DEFAULT_SIZE),
        bench_size("ANNOTATE_BENCH_LARGE", DEFAULT_LARGE),
    )


class _JoinEveryBatch:
    """The duplicate check as it was before KnownIds: each batch joined to every stored id."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def stored_hashes(self, trace_ids: Any) -> Any:
        return stored_hashes(self.store, trace_ids)

    def add(self, trace_ids: Any) -> None:
        pass

    def close(self) -> None:
        pass


def measure_into_large(count: int, large: int) -> None:
    """The mixed file into an empty store and into one already holding `large` traces (the
    sampling bench's store, built by SQL), with the import's duplicate check by hashed ids
    and, as the same-run baseline, by joining each batch to every stored trace id."""
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        work = Path(tmp)
        path = work / "traces.jsonl"
        write_jsonl(path, count, seed=7)
        cached_store(work, large).close()
        for name in ("known.duckdb", "joined.duckdb"):
            shutil.copyfile(work / "sampling.duckdb", work / name)
            store = open_store(work / name)  # migrated and checkpointed before the clock
            store.scalar("SELECT nextval('import_ids')")  # its SQL-made import took id 1
            store.execute("CHECKPOINT")
            store.close()
        empty = time_import(path, work / "empty.duckdb")
        known = time_import(path, work / "known.duckdb")
        with patch.object(importer.sql, "KnownIds", _JoinEveryBatch):
            joined = time_import(path, work / "joined.duckdb")
    show(
        f"import {count:,} mixed traces into a store holding {large:,}: {known:.1f} s "
        f"({known / count * 1e6:,.0f} us/trace); into an empty store {empty:.1f} s "
        f"({known / empty:.2f}x); baseline, each batch joined to every stored trace id "
        f"(before KnownIds): {joined:.1f} s (ours {known / joined:.2f}x)"
    )


def cpu_seconds() -> float:
    """This process's CPU time, every thread's (DuckDB's too), and its ended children's (an
    import's reader processes): a busy machine disturbs it less than the wall clock, though it
    still inflates it."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    readers = resource.getrusage(resource.RUSAGE_CHILDREN)  # an import's reader processes
    return usage.ru_utime + usage.ru_stime + readers.ru_utime + readers.ru_stime


def timed(work: Any, *args: Any) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of work(*args)."""
    cpu, started = cpu_seconds(), time.perf_counter()
    work(*args)
    return time.perf_counter() - started, cpu_seconds() - cpu


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def time_import_itself(path: Path, db: Path) -> float:
    """time_import with no reader process: the import reads and checks its rows itself."""
    with patch.dict(os.environ, {"ANNOTATE_IMPORT_READERS": "0"}):
        return time_import(path, db)


def rounds(path: Path, folder: Path, count: int) -> list[tuple[float, float]]:
    """read_json, our import and our import reading its rows itself (no reader process)
    alternately, ROUNDS times (each into a fresh file); each round's figures printed as it
    ends. CPU seconds count the reader processes'. Returns (ours, read_json) wall seconds a
    round."""
    found = []
    for number in range(1, bench_size("ANNOTATE_BENCH_ROUNDS", ROUNDS) + 1):
        bare, bare_cpu = timed(time_read_json, path, folder / f"bare-{number}.duckdb")
        ours, ours_cpu = timed(time_import, path, folder / f"store-{number}.duckdb")
        alone, alone_cpu = timed(time_import_itself, path, folder / f"alone-{number}.duckdb")
        for name in ("bare", "store", "alone"):
            (folder / f"{name}-{number}.duckdb").unlink(missing_ok=True)
        show(
            f"  round {number}: ours {ours:.1f} s ({count / ours:,.0f} traces/s; CPU {ours_cpu:.1f} s), "
            f"duckdb read_json {bare:.1f} s (CPU {bare_cpu:.1f} s): ratio {ours / bare:.2f}x "
            f"wall, {ours_cpu / bare_cpu:.2f}x CPU; the import reading its rows itself (no "
            f"reader process) {alone:.1f} s (CPU {alone_cpu:.1f} s), {alone / bare:.2f}x "
            f"read_json ({load()})"
        )
        found.append((ours, bare))
    return found


def measure(kind: str, count: int, homogeneous: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        path = Path(tmp) / "traces.jsonl"
        started = time.perf_counter()
        size = write_jsonl(path, count, homogeneous=homogeneous)
        show(
            f"generated {count:,} {kind} traces: {file_size(size)} "
            f"in {time.perf_counter() - started:.1f} s"
        )
        show(f"import {count:,} {kind} traces against duckdb read_json, alternating:")
        found = rounds(path, Path(tmp), count)
        with (  # the decoded path and the collector's pause, compared in one process
            patch.dict(os.environ, {"ANNOTATE_IMPORT_READERS": "0"}),
            patch.object(generic, "plain_trace", lambda raw, line: None),
        ):
            full = time_import(path, Path(tmp) / "full.duckdb")
        with patch.dict(os.environ, {"ANNOTATE_IMPORT_READERS": "0"}):
            alone = time_import(path, Path(tmp) / "alone.duckdb")
            collecting = time_import(path, Path(tmp) / "collecting.duckdb", pause_collector=False)
        parse = time_parse(path)
        floor = time_schema_floor(path, Path(tmp) / "floor.duckdb") if homogeneous else None
    ours = statistics.median(o for o, _ in found)
    ratios = "/".join(f"{o / b:.2f}" for o, b in found)
    show(
        f"import {count:,} {kind} traces: median {ours:.1f} s; ratio to read_json {ratios}x "
        f"by round (target <= 3x)"
    )
    show(
        f"  the import reading its rows itself (no reader process) {alone:.1f} s, with every "
        f"row through parse.py's checks, no decoded path (before it): {full:.1f} s; decoded / "
        f"full checks {alone / full:.2f}x ({load()})"
    )
    show(
        f"  the import reading its rows itself with Python's cyclic collector running: "
        f"{collecting:.1f} s; paused / running {alone / collecting:.2f}x"
    )
    if floor is not None:
        bare = statistics.median(b for _, b in found)
        show(
            f"  floor, the same file into the store's tables and their index by SQL "
            f"alone (no checks): {floor:.1f} s, {floor / bare:.1f}x read_json; ours is "
            f"{ours / floor:.1f}x the floor"
        )
    show(
        f"  read + validate without a store, in one process: {parse:.1f} s ({parse / alone:.0%} "
        f"of the import reading its rows itself; the rest, store lookups, insert tables, "
        f"DuckDB's inserts and commit: {alone - parse:.1f} s)"
    )
