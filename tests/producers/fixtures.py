"""The `produced` fixture: real traces from each producer, made once per test session.

Owns running `python -m tests.producers.run` in a subprocess per producer (instrumentors patch
the SDK for the whole process), all at once into one folder shared by the xdist workers, and the
skip when a producer's package is not installed. It must not read the traces.
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


def run_producers(outdir: Path) -> None:
    """Every installed producer's OUTDIR/PRODUCER.jsonl (or .error), all run at once, unless an
    earlier call (any xdist worker) made them: each run is mostly the SDK's import, seconds."""
    with open(outdir / "producers.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait for the one that is producing
        if (outdir / "done").exists():
            return
        env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN_SETTINGS)}
        runs = {
            producer: subprocess.Popen(
                [sys.executable, "-m", "tests.producers.run", producer, str(outdir)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for producer in PACKAGES
            if not missing_packages(producer)
        }
        for producer, run in runs.items():
            output, _ = run.communicate(timeout=300)
            if run.returncode != 0:
                (outdir / f"{producer}.error").write_text(output, encoding="utf-8")
        (outdir / "done").touch()


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
        run_producers(outdir)
        if (error := outdir / f"{producer}.error").exists():
            raise RuntimeError(f"producer {producer} failed:\n{error.read_text()}")
        return outdir / f"{producer}.jsonl"

    return produce
