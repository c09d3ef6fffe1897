"""The Canary page's forms and views: make a suite, import replayed responses, the pass-rate
table and its chart. Leads act; auditors read."""

from __future__ import annotations

import tempfile
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

import ui
from annotate.canary.rules import parse_rule
from annotate.canary.scoring import import_responses
from annotate.canary.suite import make_suite
from annotate.errors import AnnotateError, counted
from annotate.sampling.samples import list_samples
from annotate.store import Store

SCORE_COLUMNS = [
    "group", "n", "followed", "leak", "both", "neither", "pending",
    "pass_rate", "low", "high", "method",
]  # fmt: skip


def make_form(store: Store, user) -> None:
    """A lead makes a suite from a sample; the same seed gives the same suite."""
    samples = [s["name"] for s in list_samples(store) if not s["name"].startswith("canary:")]
    with st.form("canary_make_form"):
        left, right = st.columns(2)
        sample = left.selectbox("Sample", samples, key="canary_sample")
        name = left.text_input("Suite name", key="canary_name")
        rule = right.text_input("Rule (halve, scale:F, shift:D)", "halve", key="canary_rule")
        seed = right.number_input("Seed", min_value=0, value=0, step=1, key="canary_seed")
        swap = st.checkbox("Swap listed names for fictive ones", key="canary_swap")
        made = st.form_submit_button("Make the suite")
    if made:
        try:
            parse_rule(rule)
            suite = make_suite(store, sample or "", name.strip(), rule, swap, int(seed), user.name)
            st.success(
                ui.fmt("Made suite {} with {}.", suite.name, counted(len(suite.items), "item"))
            )
        except AnnotateError as exc:
            ui.show_error(exc)


def import_form(store: Store, suite: str, user) -> None:
    """A lead uploads replayed responses (generic traces with a canary_id attribute)."""
    upload = st.file_uploader(
        "Replayed responses (JSON Lines, JSON, CSV, Parquet)", key="canary_file"
    )
    if not st.button("Import the responses", key="canary_import", disabled=upload is None):
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(upload.name).name
        path.write_bytes(upload.getvalue())
        try:
            report, counts = import_responses(store, suite, path, actor=user.name)
        except AnnotateError as exc:
            ui.show_error(exc)
            return
    st.success(
        ui.fmt(
            "Imported {}, rejected {}, duplicates {}; followed {}, leak {}, both {}, neither {}.",
            report.imported,
            report.rejected,
            report.duplicates,
            counts["followed"],
            counts["leak"],
            counts["both"],
            counts["neither"],
        )  # fmt: skip
    )
    if report.errors:
        st.dataframe(pd.DataFrame([e.as_json() for e in report.errors]), hide_index=True)


def scores_frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    frame["group"] = [
        ", ".join(f"{k}={v}" for k, v in row["group"].items()) or "all" for row in rows
    ]
    return frame


def pass_rate_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """Each group's pass rate with its interval, side by side."""
    base = alt.Chart(frame).encode(y=alt.Y("group:N", title=None))
    bars = base.mark_rule().encode(
        x=alt.X("low:Q", title="pass rate (95% interval)", scale=alt.Scale(domain=[0, 1])),
        x2="high:Q",
    )
    points = base.mark_point(filled=True, size=80).encode(
        x="pass_rate:Q", tooltip=["group", "n", "pass_rate", "low", "high", "method"]
    )
    return bars + points
