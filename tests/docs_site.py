"""The documentation site built as `make docs` builds it: strict, into a folder of the caller's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEEDS = "the docs extra is not installed: pip install -e '.[docs]'"


def build_site(out: Path) -> str:
    """Build docs/ into `out` in strict mode; the build's log. Skips without the docs extra."""
    pytest.importorskip("mkdocs", reason=NEEDS)
    pytest.importorskip("material", reason=NEEDS)
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return built.stderr
