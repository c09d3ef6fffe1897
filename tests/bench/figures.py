"""Bench sizes from the environment, and the formatting of the figures they print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def child_result(code: str, *args: str, what: str, env: dict[str, str] | None = None) -> Any:
    """Run `code` in a fresh interpreter (its peak RSS its own) from the repository root, with
    `args`; the JSON document on its last line of output. A failure raises with its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {what} process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
