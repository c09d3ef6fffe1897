"""How import and the report scale: time and peak memory at three sizes each, in a table.

Every figure is taken in a fresh child process (its peak RSS is its own work's alone):
- import of generated JSONL at 10,000 / 100,000 / 1,000,000 traces
  (ANNOTATE_BENCH_SCALE_IMPORTS, comma-separated), against DuckDB's `read_json` of the same
  file into a table (time) and a process that opens a store and imports nothing (memory);
- the full agreement + calibration report (3 reviewers, 1,000 resamples, as
  bench_calibration_report) at 1,000 / 10,000 / 100,000 claims (ANNOTATE_BENCH_SCALE_CLAIMS),
  against the `krippendorff` package bootstrapping alpha alone on the same table, in its own
  child.
A row's "per unit" column shows whether the cost grows with the size and no faster.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.bench_import_memory import measure as measure_import
from tests.bench.bench_import_speed import time_read_json
from tests.bench.figures import OWN_PEAK, child_result, megabytes, show
from tests.bench.synthetic import write_jsonl

ROOT = Path(__file__).resolve().parents[2]

# One report (mode "ours") or the krippendorff baseline (mode "baseline") on a store the parent
# filled; prints one JSON line with the seconds and the peak RSS.
_REPORT_CHILD = (
    OWN_PEAK
    + """
import json, sys, time
from annotate.store import open_store
from tests.bench import bench_calibration_report as bench

mode, db = sys.argv[1], sys.argv[2]
store = open_store(db)
started = time.perf_counter()
if mode == "ours":
    numbers, rendered, _ = bench.time_ours(store)
    seconds = numbers + rendered
else:
    seconds = bench.time_baseline(store)
store.close()
print(json.dumps({
    "seconds": seconds,
    "wall": time.perf_counter() - started,
    "peak": own_peak(),
}))
"""
)


def sizes(variable: str, default: str) -> list[int]:
    raw = os.environ.get(variable, "").strip() or default
    try:
        chosen = [int(part.replace("_", "")) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise SystemExit(f"{variable}={raw!r} must be whole numbers separated by commas") from None
    if not chosen or min(chosen) < 1:
        raise SystemExit(f"{variable}={raw!r} must name at least one size of 1 or more")
    return chosen


def report_child(mode: str, db: Path) -> dict[str, Any]:
    return child_result(_REPORT_CHILD, mode, str(db), what=f"report {mode}")


def import_rows(counts: list[int]) -> list[str]:
    rows = []
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
            path = Path(tmp) / "traces.jsonl"
            write_jsonl(path, count)
            ours = measure_import("import", path, Path(tmp) / "store.duckdb")
            if ours["imported"] != count:
                raise RuntimeError(f"imported {ours['imported']:,} of {count:,} traces")
            idle = measure_import("baseline", path, Path(tmp) / "empty.duckdb")
            duck = time_read_json(path, Path(tmp) / "raw.duckdb")
        rows.append(
            f"| import | {count:,} traces | {ours['seconds']:.1f} s | "
            f"{ours['seconds'] / count * 1e6:.0f} us/trace | {megabytes(ours['peak'])} | "
            f"read_json {duck:.1f} s ({ours['seconds'] / duck:.1f}x); "
            f"store opened, nothing imported {megabytes(idle['peak'])} |"
        )
        show(rows[-1])
    return rows


def report_rows(counts: list[int]) -> list[str]:
    from tests.bench.bench_calibration_report import fill_store

    rows = []
    for claims in counts:
        with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
            db = Path(tmp) / "report.duckdb"
            fill_store(db, claims).close()
            ours = report_child("ours", db)
            base = report_child("baseline", db)
        rows.append(
            f"| report | {claims:,} claims x 3 | {ours['seconds']:.1f} s | "
            f"{ours['seconds'] / claims * 1e6:.0f} us/claim | {megabytes(ours['peak'])} | "
            f"krippendorff, alpha alone {base['seconds']:.1f} s "
            f"({ours['seconds'] / base['seconds']:.2f}x), peak {megabytes(base['peak'])} |"
        )
        show(rows[-1])
    return rows


def run() -> None:
    show("| what | size | time | per unit | peak RSS | baseline, same run |")
    show("|---|---|---|---|---|---|")
    started = time.perf_counter()
    import_rows(sizes("ANNOTATE_BENCH_SCALE_IMPORTS", "10000,100000,1000000"))
    report_rows(sizes("ANNOTATE_BENCH_SCALE_CLAIMS", "1000,10000,100000"))
    show(f"(scaling table in {time.perf_counter() - started:.0f} s)")
