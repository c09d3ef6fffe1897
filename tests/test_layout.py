"""The layout holds: import contracts kept (and they bite), modules and pages stay small."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_markdown_mechanism import hand_built_markdown

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
MAX_MODULE_LINES = 400
MAX_PAGE_LINES = 150
MAX_TOP_LEVEL_MODULES = 3  # __init__, errors, crash_log: the judge and its client are a package


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True
    )


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_import_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("stats/intervals.py", "import streamlit", "The library never imports streamlit"),
        ("stats/gold.py", "from annotate.store import Store", "stats/ is pure: no store, no LLM"),
        ("stats/alpha.py", "from annotate.judge import llm", "stats/ is pure: no store, no LLM"),
        ("store/labels.py", "from annotate.sampling import samples", "Layers go one way"),
        ("ingest/inbox.py", "from annotate.cli import main", "Layers go one way"),
        ("traces/rows.py", "from annotate.traces import parse", "No import cycle inside a package"),
        (
            "judge/rubrics/run_steps.py",
            "from annotate.judge.rubrics import runner",
            "No import cycle",
        ),
    ],
)
def test_a_forbidden_import_is_caught(tmp_path, module, line, contract):
    shutil.copytree(
        ROOT / "annotate", tmp_path / "annotate", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "annotate" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    assert f"{contract}" in result.stdout
    assert "BROKEN" in result.stdout


def test_no_module_is_over_400_lines():
    over = {
        str(p.relative_to(ROOT)): lines(p)
        for p in (ROOT / "annotate").rglob("*.py")
        if lines(p) > MAX_MODULE_LINES
    }
    assert over == {}


def test_no_page_is_over_150_lines():
    over = {p.name: lines(p) for p in (ROOT / "pages").glob("*.py") if lines(p) > MAX_PAGE_LINES}
    assert over == {}


def test_the_top_level_holds_packages_and_at_most_four_modules():
    modules = sorted(p.name for p in (ROOT / "annotate").glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
    packages = [p for p in (ROOT / "annotate").iterdir() if (p / "__init__.py").exists()]
    assert all(
        (p / "__init__.py").read_text(encoding="utf-8").startswith('"""') for p in packages
    ), "each package opens with a docstring saying what it owns and may import"


@pytest.mark.parametrize(
    "path", sorted((ROOT / "widgets").glob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_page_widgets_build_no_markdown_by_hand(path):
    assert hand_built_markdown(path) == [], "use ui.fmt(template, values) or ui.md(value)"
