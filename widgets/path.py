"""The lead's path: where the current sample stands and what comes next, each step a page link.

Shown in full on the lead's Home, and as its next step on the pages that act on a sample.
The steps and their wording come from annotate.workflow.path.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from annotate.workflow.path import LeadPath, Step, lead_path

# app.PAGE_FILES' stems: a page link names the page's file
PAGE_PATHS = {
    "import": "pages/import_traces.py",
    "sample": "pages/sample.py",
    "assign": "pages/assign.py",
    "label": "pages/label.py",
    "adjudicate": "pages/adjudicate.py",
    "agreement": "pages/agreement.py",
    "calibration": "pages/calibration.py",
    "rates": "pages/rates.py",
}
DONE, NEXT, LATER = "✓", "→", "·"  # plain characters: no icon font is fetched
NO_PACE = "after two verdicts"


def show_path(key: str = "home_path_sample") -> LeadPath:
    """Every step of the chosen sample's path with its state, the next step, and reviewers."""
    path = ui.computed(lead_path)  # recomputed only when the store changes
    if len(path.samples) > 1:
        chosen = st.selectbox("Sample", path.samples, index=len(path.samples) - 1, key=key)
        path = ui.computed(lead_path, chosen)
    st.subheader("Where the sample stands" if path.sample else "Getting started")
    upcoming = path.next_step
    for step in path.steps:
        marker = DONE if step.done else NEXT if step is upcoming else LATER
        left, right = st.columns([1, 4])
        with left:
            _link(step, f"{marker} {step.title}")
        right.caption(ui.md(step.text))
    show_next(path)
    if path.reviewers:
        st.caption("Progress per reviewer (pace: median seconds between two verdicts)")
        st.dataframe(_reviewer_frame(path), hide_index=True, key=f"{key}_reviewers")
    return path


def show_next(path: LeadPath) -> None:
    """The next step as one line with its page link; or that the path is done."""
    upcoming = path.next_step
    if upcoming is None:
        st.success("Every step of this sample is done: agreement, calibration and rates are ready.")
        return
    st.info(ui.fmt("Next: {} — {}", upcoming.title, upcoming.text))
    _link(upcoming, ui.fmt("Go to {}", upcoming.title))


def show_next_for(sample: str | None = None) -> None:
    show_next(ui.computed(lead_path, sample))


def _link(step: Step, label: str) -> None:
    st.page_link(PAGE_PATHS[step.page], label=label)


def _reviewer_frame(path: LeadPath) -> pd.DataFrame:
    rows = [
        {
            "reviewer": r["reviewer"],
            "done": r["done"],
            "assigned claims": r["claims"],
            "share done": r["done"] / r["claims"] if r["claims"] else 0.0,
            "seconds per claim": _or_why(r["seconds_per_claim"], "{:.0f}"),
            "minutes left at this pace": _or_why(r["minutes_left"], "{:.1f}"),
        }
        for r in path.reviewers
    ]
    return pd.DataFrame(rows)


def _or_why(value: float | None, style: str) -> str:
    """A pace figure as text; a reviewer without one (fewer than two verdicts in one sitting)
    is told so, where the table showed "None"."""
    return NO_PACE if value is None else style.format(value)
