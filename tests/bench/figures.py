"""Bench sizes from the environment, and the formatting of the figures they print."""

from __future__ import annotations

import os


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
