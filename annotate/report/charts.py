"""Altair charts of agreement and calibration documents, shared by the pages and the HTML report.

Charts only draw numbers already in a document; they compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd

OUTCOMES = ["unsupported", "supported"]


def confusion_chart(confusion: Mapping[str, int], title: str = "Judge x gold") -> alt.LayerChart:
    cells = pd.DataFrame(
        [
            {"judge": "unsupported", "gold": "unsupported", "units": confusion["tp"]},
            {"judge": "unsupported", "gold": "supported", "units": confusion["fp"]},
            {"judge": "supported", "gold": "unsupported", "units": confusion["fn"]},
            {"judge": "supported", "gold": "supported", "units": confusion["tn"]},
        ]
    )
    x = alt.X("gold:N", sort=OUTCOMES, title="gold (reviewers)")
    y = alt.Y("judge:N", sort=OUTCOMES, title="judge")
    base = alt.Chart(cells, title=title).encode(x=x, y=y)
    rect = base.mark_rect().encode(color=alt.Color("units:Q", scale=alt.Scale(scheme="blues")))
    text = base.mark_text(fontSize=16).encode(text="units:Q")
    return (rect + text).properties(width=260, height=200)


def _slice_name(entry: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in entry["slice"].items()) or "all"


def slice_frame(
    slices: Sequence[Mapping[str, Any]], measures: Sequence[str] = ("sensitivity", "specificity")
) -> pd.DataFrame:
    rows = [
        {
            "slice": _slice_name(entry),
            "measure": measure,
            "value": entry[measure]["value"],
            "low": entry[measure]["low"],
            "high": entry[measure]["high"],
            "units": entry[measure]["units"],
        }
        for entry in slices
        if not entry.get("reason")
        for measure in measures
        if entry[measure].get("value") is not None
    ]
    return pd.DataFrame(rows, columns=["slice", "measure", "value", "low", "high", "units"])


def interval_chart(frame: pd.DataFrame, title: str, row: str = "slice") -> alt.LayerChart:
    """Points with 95% interval bars, one row per slice (or period), coloured by measure."""
    y = alt.Y(f"{row}:N", title=None)
    offset = alt.YOffset("measure:N")
    color = alt.Color("measure:N")
    x = alt.X("value:Q", scale=alt.Scale(domain=[0, 1]), title="value with 95% interval")
    bars = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1])),
            x2="high:Q",
            y=y,
            yOffset=offset,
            color=color,
        )
    )
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=60)
        .encode(x=x, y=y, yOffset=offset, color=color, tooltip=list(frame.columns))
    )
    return (bars + points).properties(title=title, width=420)


def slice_chart(slices: Sequence[Mapping[str, Any]]) -> alt.LayerChart | None:
    frame = slice_frame(slices)
    if frame.empty:
        return None
    return interval_chart(frame, "Sensitivity and specificity per slice")


def over_time_frame(periods: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    rows = [
        {"period": p["period"], "measure": m, **{k: p[m].get(k) for k in ("value", "low", "high")}}
        for p in periods
        for m in ("percent_agreement", "krippendorff_alpha")
        if p[m].get("value") is not None
    ]
    return pd.DataFrame(rows, columns=["period", "measure", "value", "low", "high"])


def over_time_chart(periods: Sequence[Mapping[str, Any]]) -> alt.LayerChart | None:
    frame = over_time_frame(periods)
    if frame.empty:
        return None
    x = alt.X("period:O", title="period of the last label")
    color = alt.Color("measure:N")
    y = alt.Y("value:Q", scale=alt.Scale(domain=[-0.2, 1]), title="value with 95% interval")
    band = (
        alt.Chart(frame).mark_rule(strokeWidth=2).encode(x=x, y="low:Q", y2="high:Q", color=color)
    )
    line = alt.Chart(frame).mark_line(point=True).encode(x=x, y=y, color=color)
    return (band + line).properties(title="Agreement over time", width=420)


def stratum_share_chart(plan: pd.DataFrame) -> alt.Chart:
    """Population vs sample share per stratum, from `sampling.tables.plan_frame`."""
    shares = pd.concat(
        [
            pd.DataFrame(
                {
                    "stratum": plan["stratum"],
                    "of": "population",
                    "share": plan["N_h"] / plan["N_h"].sum(),
                }
            ),
            pd.DataFrame(
                {
                    "stratum": plan["stratum"],
                    "of": "sample",
                    "share": plan["n_h"] / plan["n_h"].sum(),
                }
            ),
        ]
    )
    return (
        alt.Chart(shares, title="Population vs sample share per stratum")
        .mark_bar()
        .encode(
            y=alt.Y("stratum:N", title=None),
            x=alt.X("share:Q", axis=alt.Axis(format="%")),
            yOffset="of:N",
            color=alt.Color("of:N", title=None),
            tooltip=["stratum", "of", alt.Tooltip("share:Q", format=".1%")],
        )
    )
