"""Altair charts of rates: interval bars per slice and estimator, the trend with its bands,
the judge's score histogram. Specifications only: no streamlit, no store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd

from annotate.errors import slice_label

ESTIMATOR_COLOURS = alt.Scale(
    domain=["weighted_human", "judge_raw", "judge_corrected", "rogan_gladen"],
    range=["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"],
)


def rates_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The rows as a table a page shows: slice as text, the numbers, state and why."""
    return pd.DataFrame(
        [
            {
                "slice": slice_label(r["slice"]),
                "level": r["level"],
                "estimator": r["estimator"],
                "n": r["n"],
                "rate": r["rate"],
                "low": r["low"],
                "high": r["high"],
                "state": r["state"],
                "note": r.get("reason") or "",
                "method": r["method"],
            }
            for r in rows
        ]
    )


def rates_chart(rows: Sequence[Mapping[str, Any]], threshold: float) -> Any:
    """One line per slice: each estimator's point and 95% interval, and the threshold."""
    data = rates_frame([r for r in rows if r["rate"] is not None])
    if data.empty:
        return None
    base = alt.Chart(data).encode(
        y=alt.Y("slice:N", title=None),
        yOffset=alt.YOffset("estimator:N"),
        color=alt.Color("estimator:N", scale=ESTIMATOR_COLOURS),
        tooltip=["slice", "estimator", "n", alt.Tooltip("rate:Q", format=".1%"),
                 alt.Tooltip("low:Q", format=".1%"), alt.Tooltip("high:Q", format=".1%"), "state"],
    )  # fmt: skip
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="hallucination rate (95% interval)", axis=alt.Axis(format="%")),
        x2="high:Q",
    )
    points = base.mark_point(filled=True, size=50).encode(x="rate:Q")
    line = (
        alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(strokeDash=[4, 4], color="red")
        .encode(x="threshold:Q")
    )
    return alt.layer(bars, points, line)


def trend_chart(rows: Sequence[Mapping[str, Any]], window: str) -> Any:
    data = pd.DataFrame(
        [{"window": r["slice"][window], "estimator": r["estimator"], "rate": r["rate"],
          "low": r["low"], "high": r["high"]} for r in rows if r["rate"] is not None]
    )  # fmt: skip
    if data.empty:
        return None
    base = alt.Chart(data).encode(
        x=alt.X("window:O", title=window), color=alt.Color("estimator:N", scale=ESTIMATOR_COLOURS)
    )
    band = base.mark_area(opacity=0.2).encode(
        y=alt.Y("low:Q", axis=alt.Axis(format="%"), title="rate"), y2="high:Q"
    )
    return alt.layer(band, base.mark_line(point=True).encode(y="rate:Q"))


def score_chart(summary: Mapping[str, Any]) -> Any:
    if not summary.get("buckets"):
        return None
    data = pd.DataFrame(summary["buckets"]).assign(
        bucket=lambda d: [f"{lo:.2f}-{hi:.2f}" for lo, hi in zip(d["low"], d["high"], strict=True)]
    )
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("bucket:O", sort=None, title="judge score"),
            y=alt.Y("count:Q", title="verdicts"),
        )
    )
