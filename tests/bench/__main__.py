"""Run every bench_*.py module here and print its figures.

Usage, from the repository root: python -m tests.bench [NAME ...]
where NAME picks modules by part of their name (e.g. `speed`); no NAME runs them all.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import platform
import sys
import time

import duckdb
import pyarrow

import tests.bench
from tests.bench.figures import show


def bench_modules(wanted: list[str]) -> list[str]:
    names = sorted(
        info.name
        for info in pkgutil.iter_modules(tests.bench.__path__)
        if info.name.startswith("bench_")
    )
    chosen = [name for name in names if not wanted or any(part in name for part in wanted)]
    if not chosen:
        raise SystemExit(
            f"no bench module matches {' '.join(wanted)}; there are: {', '.join(names)}"
        )
    return chosen


def total_memory() -> str:
    try:
        with open("/proc/meminfo") as fh:
            kilobytes = int(fh.readline().split()[1])
    except (OSError, ValueError, IndexError):
        return "unknown"
    return f"{kilobytes / 1024**2:.0f} GB"


def show_machine() -> None:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    show(
        f"machine: {platform.machine()}, nproc {cpus}, memory {total_memory()}; "
        f"python {platform.python_version()}, duckdb {duckdb.__version__}, "
        f"pyarrow {pyarrow.__version__}"
    )


def main(argv: list[str]) -> None:
    show_machine()
    for name in bench_modules(argv):
        show(f"\n== {name} ==")
        started = time.perf_counter()
        importlib.import_module(f"tests.bench.{name}").run()
        show(f"({name} took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
