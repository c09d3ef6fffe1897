"""The `produced` fixture: real traces from each producer, made once per test session.

Owns running `python -m tests.producers.run` in a subprocess (instrumentors patch the SDK for
the whole process) into one folder shared by the xdist workers, and the skip when a producer's
package is not installed. It must not read the traces.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest

from tests.producers.producers import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
# the producers' settings come from run.py alone, never from the developer's shell
FOREIGN_SETTINGS = ("OTEL_", "LANGFUSE_", "MLFLOW_", "TRACELOOP_", "OPENINFERENCE_", "ANTHROPIC_")


def missing_packages(producer: str) -> list[str]:
    """The distributions `producer` needs that are not installed (a tuple: any one will do)."""
    missing = []
    for need in PACKAGES[producer]:
        names = (need,) if isinstance(need, str) else need
        if not any(is_installed(name) for name in names):
            missing.append(" or ".join(names))
    return missing


def is_installed(distribution: str) -> bool:
    try:
        metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def run_producer(producer: str, outdir: Path) -> Path:
    """OUTDIR/PRODUCER.jsonl, made by a run of its own unless an earlier one (any worker) made it."""
    out = outdir / f"{producer}.jsonl"
    with open(outdir / f"{producer}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers wait for the one that is producing
        if out.exists():
            return out
        env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN_SETTINGS)}
        done = subprocess.run(
            [sys.executable, "-m", "tests.producers.run", producer, str(outdir)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            raise RuntimeError(f"producer {producer} failed:\n{done.stdout}\n{done.stderr}")
    return out


@pytest.fixture(scope="session")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`produced(producer)`: the OTLP JSON Lines file of the four kinds of traffic under it.

    One file per producer holds all four kinds, one trace each (the tool call's two Messages
    calls share theirs); find a kind's trace by its question (traffic.KINDS).
    """
    basetemp = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp is in the session's own folder, which they share
    session_dir = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    outdir = session_dir / "produced"
    outdir.mkdir(exist_ok=True)

    def produce(producer: str) -> Path:
        if producer not in PACKAGES:
            raise KeyError(f"unknown producer {producer!r}; known: {', '.join(PACKAGES)}")
        if missing := missing_packages(producer):
            pytest.skip(f"{producer} traces need {', '.join(missing)} (pip install -e '.[dev]')")
        return run_producer(producer, outdir)

    return produce
