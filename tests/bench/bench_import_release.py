"""Memory given back after a large import (issue 36): in the running app, and in a bare process.

1. The app, as the acceptance says: `streamlit run app.py` on a fresh store, a lead signed in
   in chromium, the Import page visited once (its code loaded); the app process's RSS then
   ("before") and after a 20-trace import through the page ("warm": what a first import
   loads and keeps whatever its size), ANNOTATE_BENCH_RELEASE generated traces (default
   100,000; the 20 among them found duplicates) uploaded as a JSON
   Lines file through the Import page and imported, RSS when the summary shows ("right
   after") and every 5 s for ANNOTATE_BENCH_RELEASE_WAIT seconds (default 60: "a minute
   after") with the page left open; RssAnon and RssFile beside VmRSS, and what Streamlit's
   uploaded file manager still holds (its /_stcore/metrics). Two baselines, the same app in
   the same run with parts of the mechanism left out: "upload kept" (the Import page's box
   keeps the imported file, as before this work: `Store.release_memory` alone) and "nothing
   released" (neither, as issue 36 found it). The upload limit is raised to 1 GB: 100,000
   generated traces are 295 MB, over Streamlit's 200 MB default. ANNOTATE_BENCH_RELEASE_APP=0
   leaves this part out (it needs chromium at /usr/bin/chromium; without it, it is skipped).
2. A bare process: one fresh interpreter per variant imports the same file into a store it
   keeps open, RSS before (after a 20-trace import: the code an app has loaded), right after,
   and the wait later (the store queried every half second meanwhile, as a page's next runs
   would); baseline: `Store.release_memory` left out.
Target: within 20% of before.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tests.bench.figures import bench_size, child_result, file_size, megabytes, show
from tests.bench.import_release_app import measure_app
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
        measure_app(path, warm, count, wait)
        show("bare process (the store kept open, no Streamlit):")
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
