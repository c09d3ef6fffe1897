"""Altair charts of agreement and calibration documents, shared by the pages and the HTML report.

Charts only draw numbers already in a document; they compute nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
    # Fixed bands (Step), horizontal labels: the cells keep their size in a narrow column,
    # where a stretched chart squeezed them to ~10 px rows.
    x = alt.X("gold:N", sort=OUTCOMES, title="gold (reviewers)", axis=alt.Axis(labelAngle=0))
    y = alt.Y("judge:N", sort=OUTCOMES, title="judge")
    base = alt.Chart(cells, title=title).encode(x=x, y=y)
    rect = base.mark_rect().encode(color=alt.Color("units:Q", scale=alt.Scale(scheme="blues")))
    text = base.mark_text(fontSize=16).encode(
        text="units:Q",
        color=alt.condition(
            alt.datum.units > max(confusion.values()) / 2, alt.value("white"), alt.value("black")
        ),
    )
    return (rect + text).properties(width=alt.Step(CELL), height=alt.Step(CELL))


CELL = 120  # px per confusion cell: room for "unsupported" under each


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
    """One row per period and measure; `start` is the period's first day ("week of
    2026-03-02" or "2026-03-02"), so periods sit on a time axis at their real distances."""
    rows = [
        {
            "period": p["period"],
            "start": pd.to_datetime(str(p["period"])[-10:], errors="coerce"),
            "measure": m,
            **{k: p[m].get(k) for k in ("value", "low", "high")},
        }
        for p in periods
        for m in ("percent_agreement", "krippendorff_alpha")
        if p[m].get("value") is not None
    ]
    return pd.DataFrame(rows, columns=["period", "start", "measure", "value", "low", "high"])


def value_domain(frame: pd.DataFrame) -> list[float]:
    """A y range holding every value and interval bound, 0 and 1 (alpha can be below 0)."""
    values = pd.concat([frame[c] for c in ("value", "low", "high")]).dropna()
    low = min(0.0, float(values.min()) if len(values) else 0.0)
    high = max(1.0, float(values.max()) if len(values) else 1.0)
    pad = 0.05 * (high - low)
    return [max(-1.0, low - pad) if low < 0 else low, high]


def over_time_chart(periods: Sequence[Mapping[str, Any]]) -> alt.LayerChart | None:
    frame = over_time_frame(periods)
    if frame.empty:
        return None
    x = alt.X("start:T", title="period of the last label (day, or week from Monday)")
    color = alt.Color("measure:N")
    scale = alt.Scale(domain=value_domain(frame), nice=False, zero=False)
    y = alt.Y("value:Q", scale=scale, title="value with 95% interval")
    band = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=2, clip=True)
        .encode(x=x, y=alt.Y("low:Q", scale=scale), y2="high:Q", color=color)
    )
    line = (
        alt.Chart(frame)
        .mark_line(point=True, clip=True)
        .encode(x=x, y=y, color=color, tooltip=["period", "measure", "value", "low", "high"])
    )
    return (band + line).properties(title="Agreement over time", width=420, height=260)


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


# The report's charts, by the name the chart helper knows them by (`report.svg`).
REPORT_CHARTS: dict[str, Callable[..., alt.TopLevelMixin | None]] = {
    "confusion": confusion_chart,
    "slices": slice_chart,
    "over_time": over_time_chart,
}


def report_spec(name: str, args: Sequence[Any]) -> dict[str, Any] | None:
    """The Vega-Lite spec of report chart `name` drawn from `args`, or None when it has
    nothing to draw."""
    chart = REPORT_CHARTS[name](*args)
    return None if chart is None else chart.to_dict(validate=False)
