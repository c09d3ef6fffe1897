"""Branch coverage per package of `annotate/`, from the `coverage json` file `make coverage` writes.

No threshold: the table is for reading (a drop shows), not a number to game.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def package_of(path: str) -> str:
    parts = Path(path).parts
    inside = parts[parts.index("annotate") + 1 :]
    return "annotate/" + (inside[0] if len(inside) > 1 else "(top level)")


def by_package(report: dict) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path, data in report["files"].items():
        summary = data["summary"]
        row = totals[package_of(path)]
        for key in ("num_statements", "covered_lines", "num_branches", "covered_branches"):
            row[key] += summary.get(key, 0)
    return totals


def main(path: str = "coverage.json") -> int:
    totals = by_package(json.loads(Path(path).read_text()))
    print(f"{'package':<28}{'lines':>8}{'covered':>10}{'branches':>10}{'covered':>10}")
    for name, row in sorted(totals.items()):
        lines = row["covered_lines"] / max(row["num_statements"], 1)
        branches = row["covered_branches"] / max(row["num_branches"], 1)
        print(
            f"{name:<28}{row['num_statements']:>8}{lines:>10.1%}"
            f"{row['num_branches']:>10}{branches:>10.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
