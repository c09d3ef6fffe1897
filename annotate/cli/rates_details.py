"""`annotate rates --details` as text: the error types among unsupported gold claims and the
judge's score histogram, from the same document --json prints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.cli.console import shown
from annotate.errors import counted, slice_label


def details_text(document: Mapping[str, Any]) -> list[str]:
    """--details as text: error types among unsupported gold claims, the judge's scores."""
    lines = ["error types (weighted share of unsupported gold claims):"]
    for row in document["error_types"]:
        share = "—" if row["share"] is None else f"{row['share']:.3f}"
        lines.append(
            f"  {shown(slice_label(row['slice']))}\t{shown(row['error_type'])}\t"
            f"{counted(row['claims'], 'claim')}\t{share}"
        )
    found = document["scores"]
    if not found.get("count"):
        return [*lines, f"judge scores: none ({found.get('reason')})"]
    lines.append(
        f"judge scores of {shown(found.get('judge', ''))}: {found['count']:,}, p50 "
        f"{found['p50']:.3f}, p95 {found['p95']:.3f}, sd {found['std']:.3f}"
    )
    lines += [f"  [{b['low']:.3f}, {b['high']:.3f})\t{b['count']:,}" for b in found["buckets"]]
    return lines
