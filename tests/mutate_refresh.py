"""Bring mutants/ up to date with the sources mutmut does not mutate, before `make mutate`.

mutmut 3 copies annotate/ into mutants/ once and, on a resumed run, regenerates only the
mutated modules: every other module (the store, ingest, ...) stays as it was on the first
run, so the mutants were tested against stale code. This copies each changed one again.
Results are untouched: mutmut itself re-tests the mutants of functions that changed.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def refresh(root: Path = ROOT) -> int:
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mutmut"]
    mutated = {root / path for path in config["only_mutate"]}
    target = root / "mutants"
    if not target.exists():
        return 0
    copied = 0
    for source in (root / "annotate").rglob("*"):
        if source.is_dir() or "__pycache__" in source.parts or source in mutated:
            continue
        copy = target / source.relative_to(root)
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
            copied += 1
    return copied


if __name__ == "__main__":
    print(f"mutants/: {refresh()} unmutated module(s) brought up to date")
