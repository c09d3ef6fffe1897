"""The Architecture page's generated parts (docs/hooks/architecture.py): every package of
annotate/ with its docstring, every import-linter contract of pyproject.toml in words."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "hooks"))
import architecture  # noqa: E402 - the MkDocs hook, importable as a plain module


def test_every_package_is_listed_with_its_docstring() -> None:
    table = architecture.packages_table()
    packages = [p.parent.name for p in (ROOT / "annotate").glob("*/__init__.py")]
    assert len(packages) > 10
    for name in packages:
        assert f"| `{name}/` |" in table
    assert "| `stats/` | " in table and "| `stats/` |  |" not in table  # a docstring, not blank


def test_every_contract_is_rendered_with_its_modules() -> None:
    text = architecture.contracts_text()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        assert f"### {contract['name']}" in text
        for module in contract.get("layers", []) + contract.get("forbidden_modules", []):
            assert f"`{module}`" in text


def test_the_markers_are_on_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    built = architecture.on_page_markdown(page, page=None)
    assert architecture.PACKAGES not in built and architecture.CONTRACTS not in built
    assert "Layers go one way" in built
    assert "docs/hooks/architecture.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_every_bench_is_listed_with_the_command_that_runs_it() -> None:
    table = architecture.benches_table()
    benches = sorted((ROOT / "tests" / "bench").glob("bench_*.py"))
    assert len(benches) > 5
    for bench in benches:
        assert f"`python -m tests.bench {bench.stem.removeprefix('bench_')}`" in table
    assert architecture.BENCHES in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
