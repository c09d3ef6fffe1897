"""Import speed of this checkout against an earlier commit's, on the bench's own files, in the
same run: the check that a change to the import (new conventions, mapping rules) costs the
common case nothing.

ANNOTATE_BENCH_BASE names the earlier commit (default: the last commit before the
"real traces in" work, 136b187); it is checked out into a temporary git worktree. Both sides
import the same generated JSON Lines files (the mixed and the homogeneous shapes of
bench_import_speed, ANNOTATE_BENCH_VERSUS rows each, default 50,000), each into a fresh
store, in a fresh interpreter each run,
alternating base and head three times; the median CPU seconds (user + system, which a busy
machine disturbs less than the wall clock) of each is printed with their ratio, and the wall
clock beside.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench.figures import bench_size, file_size, show
from tests.bench.synthetic import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BASE = "136b187"
RUNS = 3
# Run in a fresh interpreter with `root` first on sys.path: that checkout's annotate.
TIMED = """
import resource, sys, time
sys.path.insert(0, sys.argv[1])
import annotate
assert annotate.__file__.startswith(sys.argv[1]), annotate.__file__
from annotate.store import open_store
from annotate.ingest.importer import import_traces
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
started, cpu_started = time.perf_counter(), cpu()
store = open_store(sys.argv[3])
report = import_traces(store, sys.argv[2])
store.close()
print("RESULT", cpu() - cpu_started, report.imported, report.rejected, time.perf_counter() - started)
"""


def worktree(base: str, folder: Path) -> Path:
    target = folder / "base"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(target), base],
        check=True,
        capture_output=True,
    )
    return target


def timed(root: Path, path: Path, folder: Path) -> tuple[float, str]:
    db = folder / f"{root.name}-{path.stem}.duckdb"
    db.unlink(missing_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", TIMED, str(root), str(path), str(db)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    db.unlink(missing_ok=True)
    out = next(line for line in out.splitlines() if line.startswith("RESULT ")).split()[1:]
    return float(out[0]), f"imported {out[1]}, rejected {out[2]}, wall {float(out[3]):.2f} s"


def compare(name: str, path: Path, base: Path, folder: Path) -> None:
    times: dict[str, list[float]] = {"base": [], "head": []}
    counts = {}
    for _ in range(RUNS):
        for side, root in (("base", base), ("head", ROOT)):
            seconds, counts[side] = timed(root, path, folder)
            times[side].append(seconds)
    base_s, head_s = statistics.median(times["base"]), statistics.median(times["head"])
    show(
        f"import {name} ({file_size(path.stat().st_size)}): CPU head {head_s:.2f} s "
        f"({counts['head']}), base {base_s:.2f} s ({counts['base']}); head/base "
        f"{head_s / base_s:.3f} "
        f"(median of {RUNS}, alternating; head {_seconds(times['head'])}, base "
        f"{_seconds(times['base'])})"
    )


def _seconds(values: list[float]) -> str:
    return "/".join(f"{value:.2f}" for value in values)


def run() -> None:
    base_commit = os.environ.get("ANNOTATE_BENCH_BASE", DEFAULT_BASE)
    count = bench_size("ANNOTATE_BENCH_VERSUS", 50_000)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        base = worktree(base_commit, folder)
        try:
            show(f"import versus {base_commit}: {count:,} rows a file")
            for shape, homogeneous in (("mixed", False), ("homogeneous", True)):
                path = folder / f"{shape}.jsonl"
                write_jsonl(path, count, homogeneous=homogeneous)
                compare(f"{shape} JSON Lines", path, base, folder)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                check=False,
                capture_output=True,
            )


if __name__ == "__main__":
    run()
