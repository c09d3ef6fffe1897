"""The generated parts of the Architecture and Benchmarks pages, made at build time: the
packages of `annotate/`, each with the docstring of its `__init__.py`, the import-linter
contracts of pyproject.toml, and the benches of tests/bench with their docstrings, so the pages
follow the code when packages move, contracts change or a bench is added.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = "<!-- packages -->"
CONTRACTS = "<!-- import-contracts -->"
BENCHES = "<!-- benches -->"


def packages_table(root: Path = ROOT) -> str:
    """One row per package of annotate/: its name and its docstring, joined into one line."""
    rows = ["| package | what it owns and may import |", "|---|---|"]
    for init in sorted((root / "annotate").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        text = " ".join(doc.split()).replace("|", "\\|")
        rows.append(f"| `{init.parent.name}/` | {text} |")
    return "\n".join(rows)


def contract_text(contract: dict[str, Any]) -> str:
    """One contract as a heading and what it allows, in words."""
    lines = [f"### {contract['name']}", ""]
    if contract["type"] == "layers":
        lines.append(
            "Each layer may import the layers below it, never one above (`|`: independent):"
        )
        lines.append("")
        lines += [f"{n}. `{layer}`" for n, layer in enumerate(contract["layers"], 1)]
    elif contract["type"] == "forbidden":
        sources = ", ".join(f"`{m}`" for m in contract["source_modules"])
        banned = ", ".join(f"`{m}`" for m in contract["forbidden_modules"])
        how = "directly" if contract.get("allow_indirect_imports") else "directly or indirectly"
        lines.append(f"{sources} may not import {banned} ({how}).")
    else:
        lines.append(
            f"A `{contract['type']}` contract: see `[tool.importlinter]` in pyproject.toml."
        )
    return "\n".join(lines) + "\n"


def contracts_text(root: Path = ROOT) -> str:
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return "\n".join(contract_text(contract) for contract in contracts)


def benches_table(root: Path = ROOT) -> str:
    """One row per tests/bench/bench_*.py: the command that runs it alone and what it measures."""
    rows = ["| bench | what it measures, beside which baseline |", "|---|---|"]
    for bench in sorted((root / "tests" / "bench").glob("bench_*.py")):
        doc = ast.get_docstring(ast.parse(bench.read_text(encoding="utf-8"))) or ""
        text = " ".join(doc.split()).replace("|", "\\|")
        name = bench.stem.removeprefix("bench_")
        rows.append(f"| `python -m tests.bench {name}` | {text} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, **_: object) -> str:
    """MkDocs hook: fill the Architecture and Benchmarks pages' markers."""
    if PACKAGES in markdown:
        markdown = markdown.replace(PACKAGES, packages_table())
    if CONTRACTS in markdown:
        markdown = markdown.replace(CONTRACTS, contracts_text())
    if BENCHES in markdown:
        markdown = markdown.replace(BENCHES, benches_table())
    return markdown
