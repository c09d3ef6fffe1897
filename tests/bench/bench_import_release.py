"""Memory given back after a large import, as the app lives on after a page import.

One fresh interpreter per variant imports ANNOTATE_BENCH_RELEASE traces (default 100,000)
into a store it keeps open, and prints its RSS before the import, right after it, and
ANNOTATE_BENCH_RELEASE_WAIT seconds later (default 60: issue 36's "a minute after"; the store
queried every half second meanwhile, as a page's next runs would). "Before" is measured after
a 20-trace import, as the app has loaded the import's code before a large import (it is not
memory an import holds). Target: within 20% of before. The baseline is the same import with
`Store.release_memory` left out (as before it existed), in the same run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tests.bench.figures import bench_size, child_result, file_size, megabytes, show
from tests.bench.synthetic import write_jsonl

DEFAULT_SIZE = 100_000
DEFAULT_WAIT = 60

_CHILD = """
import json, sys, time
from annotate.ingest.importer import import_traces
from annotate.store import Store, open_store

def rss():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmRSS:"))

mode, path, db, warm, wait = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
if mode == "held":  # as before: nothing released after the import
    Store.release_memory = lambda self: None
store = open_store(db)
store.scalar("SELECT count(*) FROM traces")
import_traces(store, warm, fmt="jsonl")  # the code an app has loaded before a large import
before = rss()
started = time.perf_counter()
imported = import_traces(store, path, fmt="jsonl").imported
seconds = time.perf_counter() - started
after = rss()
deadline = time.monotonic() + wait  # a while later: the page reruns and reads the store
while time.monotonic() < deadline:
    store.scalar("SELECT count(*) FROM traces WHERE feature IS NOT NULL")
    time.sleep(0.5)
later = rss()
store.close()
print(json.dumps({"before": before, "after": after, "later": later, "imported": imported,
                  "seconds": seconds}))
"""


def measure(mode: str, path: Path, db: Path, warm: Path, wait: int) -> dict[str, Any]:
    return child_result(_CHILD, mode, str(path), str(db), str(warm), str(wait), what=mode)


def describe(result: dict[str, Any]) -> str:
    return (
        f"RSS before {megabytes(result['before'])}, right after {megabytes(result['after'])}, "
        f"a while after {megabytes(result['later'])} ({result['later'] / result['before']:.2f}x "
        f"before; import {result['seconds']:.1f} s)"
    )


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_RELEASE", DEFAULT_SIZE)
    wait = bench_size("ANNOTATE_BENCH_RELEASE_WAIT", DEFAULT_WAIT)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        path = Path(tmp) / "traces.jsonl"
        size = write_jsonl(path, count)
        warm = Path(tmp) / "warm.jsonl"
        with path.open() as fh:  # the first 20 traces (the big import finds them duplicates)
            warm.write_text("".join(fh.readline() for _ in range(20)))
        show(f"generated {count:,} traces: {file_size(size)}; RSS {wait} s after the import")
        released = measure("released", path, Path(tmp) / "released.duckdb", warm, wait)
        held = measure("held", path, Path(tmp) / "held.duckdb", warm, wait)
    if released["imported"] != count - 20:
        raise RuntimeError(f"imported {released['imported']:,} of {count:,} generated traces")
    show(f"import {count:,} traces, memory released: {describe(released)}")
    show(f"  baseline, nothing released (as before): {describe(held)}")
    grown = [r["later"] - r["before"] for r in (released, held)]
    show(f"  kept a while after the import: {megabytes(grown[0])} against {megabytes(grown[1])}")
    show(
        f"  RSS a while after / before: {released['later'] / released['before']:.2f}x "
        f"(target <= 1.20x); nothing released: {held['later'] / held['before']:.2f}x"
    )
