"""Bench sizes from the environment, and the formatting of the figures they print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def bench_size(variable: str, default: int) -> int:
    """A row count from `variable` (underscores allowed, like 100_000), else `default`."""
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{variable}={raw!r} must be a whole number of traces") from None
    if value < 1:
        raise SystemExit(f"{variable}={raw!r} must be at least 1")
    return value


def megabytes(size: float) -> str:
    return f"{size / 1e6:,.0f} MB"


def file_size(size: float) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else megabytes(size)


def show(line: str) -> None:
    """Print at once: a bench runs for minutes and its output is often piped."""
    print(line, flush=True)


# Prepended to the code a bench runs in a fresh interpreter: that interpreter's own peak RSS.
# VmHWM starts afresh at exec; ru_maxrss (getrusage) carries the parent's peak over it, which
# made a small child report the bench's own 866 MB-1.8 GB.
OWN_PEAK = """
def own_peak():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM:"))
"""


def child_result(
    code: str,
    *args: str,
    what: str,
    env: dict[str, str] | None = None,
    tree: list[int] | None = None,
) -> Any:
    """Run `code` in a fresh interpreter (its peak RSS its own) from the repository root, with
    `args`; the JSON document on its last line of output. A failure raises with its stderr.
    `tree`: gets the peak of the summed RSS of the process and its children (an import's
    reader processes), sampled every 20 ms."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=out,
            stderr=err,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            env=env,
        )
        peak = 0
        while child.poll() is None:
            if tree is not None:
                peak = max(peak, tree_rss(child.pid))
            time.sleep(0.02)
        if tree is not None:
            tree.append(peak)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"the {what} process failed:\n{err.read()[-3000:]}")
        return json.loads(out.read().strip().splitlines()[-1])


def tree_rss(pid: int) -> int:
    """The resident memory of a process and its children, in bytes (0 once it has gone)."""
    total = 0
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    for one in (pid, *map(int, children)):
        try:
            status = Path(f"/proc/{one}/status").read_text()
        except OSError:
            continue
        rss = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
        total += int(rss[0]) * 1024 if rss else 0
    return total
