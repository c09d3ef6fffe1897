"""Every shell session in the docs (a ```console block, commands after `$ `) runs green against a
fresh store: a temporary folder where `annotate init` loaded the bundled sample, as `make run`
does. Output lines written under a command must appear in what it printed (`...` elides)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"^```console\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Step:
    command: str
    expected: tuple[str, ...]


def sessions() -> list[tuple[str, str]]:
    """(page:line, block text) of every console block of the docs and the README."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def steps(block: str) -> list[Step]:
    """The commands of a block (a line ending in a backslash goes on), each with its output."""
    result: list[Step] = []
    command, expected, going_on = "", [], False
    for line in block.splitlines():
        if going_on:
            command += "\n" + line
        elif line.startswith("$ "):
            if command:
                result.append(Step(command, tuple(expected)))
            command, expected = line[2:], []
        elif line.strip() and line.strip() != "...":
            expected.append(line)
        going_on = bool(command) and line.endswith("\\") and (going_on or line.startswith("$ "))
    if command:
        result.append(Step(command, tuple(expected)))
    return result


def plain(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def bundled(bundled_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose data/ holds the store `make run` makes (conftest's bundled_store) and
    the bundled sample files, as `annotate init` leaves a folder."""
    folder = tmp_path_factory.mktemp("bundled")
    shutil.copytree(ROOT / "data", folder / "data", ignore=shutil.ignore_patterns("*.duckdb*"))
    shutil.copy(bundled_store, folder / "data" / "annotate.duckdb")
    return folder


def annotate() -> str:
    return str(Path(sys.executable).parent / "annotate")


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNOTATE_", "ANTHROPIC_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_docs_hold_shell_sessions() -> None:
    where = {place.split(":")[0] for place, _ in sessions()}
    assert {"docs/getting-started.md", "docs/leads.md"} <= where


def test_steps_join_continued_lines_and_skip_elisions() -> None:
    block = "$ annotate rates \\\n    --sample demo\nslice level\n...\n$ annotate status\n"
    assert steps(block) == [
        Step("annotate rates \\\n    --sample demo", ("slice level",)),
        Step("annotate status", ()),
    ]


@pytest.mark.parametrize(("place", "block"), sessions(), ids=[p for p, _ in sessions()])
def test_each_shell_session_runs_green_on_a_fresh_store(
    place: str, block: str, bundled: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "store"
    shutil.copytree(bundled, folder)
    for step in steps(block):
        done = subprocess.run(
            ["bash", "-c", step.command],
            cwd=folder,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        printed = plain(done.stdout + done.stderr)
        assert done.returncode == 0, (place, step.command, done.stderr[-2000:])
        for line in step.expected:
            assert plain(line) in printed, (place, step.command, line, printed[:3000])
