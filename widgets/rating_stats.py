"""Ratings on a scale on the Agreement, Calibration and Rates pages: one section each, a
criterion picker and its statistics with intervals (computed by annotate.ratings)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from annotate.ratings.agreement import reviewer_agreement
from annotate.ratings.calibration import rating_calibration
from annotate.ratings.estimates import SLICES, rating_estimates
from annotate.sampling.samples import list_samples
from annotate.store.ratings import rated_criteria, rating_judges
from widgets import claim_display

ALL = "(every rated trace)"

AGREEMENT = ("krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "icc_2_1")
CALIBRATION = ("weighted_kappa_quadratic", "mean_bias", "mean_absolute_difference", "spearman_rho")


def _criterion(page: str) -> str | None:
    criteria = ui.computed(rated_criteria)
    if not criteria:
        return None
    st.subheader("Ratings on a scale")
    return st.selectbox("Criterion", criteria, key=f"{page}_criterion")


def agreement_section(sample: str | None) -> None:
    criterion = _criterion("agreement")
    if criterion is None:
        return
    found = ui.computed(reviewer_agreement, criterion, sample)
    st.caption(ui.fmt("{} responses rated by two or more reviewers", found["units"]))
    rows = [claim_display.stat_row(name, found[name]) for name in AGREEMENT]
    rows += [
        claim_display.stat_row(f"weighted kappa (quadratic) {p['a']} / {p['b']}", p)
        for p in found["weighted_kappa_quadratic"]
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="agreement_ratings_table")


def calibration_section() -> None:
    """At the top of the Calibration page, in an expander with its own pickers (the page's
    stop when no claim verdict exists must not hide a judge that only rates)."""
    judges = ui.computed(rating_judges)
    if not judges:
        return
    with st.expander("Ratings on a scale: a judge's ratings against the reviewers'"):
        _calibration_table(judges)


def _calibration_table(judges: list[str]) -> None:
    criterion = _criterion("calibration")
    if criterion is None:
        return
    samples = [ALL, *(s["name"] for s in list_samples(ui.store()))]
    chosen = st.selectbox("Sample", samples, key="calibration_rating_sample")
    sample = None if chosen == ALL else chosen
    judge = st.selectbox("Rating judge", judges, key="calibration_rating_judge")
    found = ui.computed(rating_calibration, judge, criterion, sample)
    st.caption(
        ui.fmt(
            "{} responses rated by the judge and a reviewer · bias = judge minus the reviewers' "
            "mean, in scale points",
            found["units"],
        )
    )
    rows = [claim_display.stat_row(name, found[name]) for name in CALIBRATION]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="calibration_ratings_table")
    st.caption(ui.md(found["readiness"]["verdict"]))


def rates_section(sample: str) -> None:
    criterion = _criterion("rates")
    if criterion is None:
        return
    found = ui.computed(rating_estimates, criterion, sample)
    st.caption(ui.md(found["method"]))
    rows = [_rate_row("overall", found["overall"])]
    rows += [_rate_row(f"{n}={k}", v) for n in SLICES for k, v in found[n].items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="rates_ratings_table")


def _rate_row(label: str, entry: dict) -> dict:
    mean, share = entry["mean"], entry["share_at_or_below"]
    return {
        "slice": label,
        "responses": mean["units"],
        "mean": mean["value"],
        "low": mean["low"],
        "high": mean["high"],
        "share at or below 2": share["value"],
        "share low": share["low"],
        "share high": share["high"],
    }
