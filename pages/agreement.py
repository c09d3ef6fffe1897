"""Agreement between reviewers: the statistics with intervals, per reviewer, and over time."""

import pandas as pd
import streamlit as st

import ui
from annotate.agreement.reliability import PAIR_STATS, STATISTICS, agreement, save_min_shared
from annotate.errors import AnnotateError
from annotate.report import charts
from annotate.sampling.samples import list_samples
from widgets import ahead, claim_display, rating_stats

user = ui.require_role("lead", "auditor")
st.set_page_config(layout="wide")  # app.py's does not reach the page (Streamlit 1.67)
store = ui.store()


st.title("Agreement between reviewers")

ALL = "(every labelled trace)"
left, middle, right = st.columns(3)
sample = left.selectbox(
    "Sample", [ALL] + [s["name"] for s in list_samples(store)], key="agreement_sample"
)
level = middle.selectbox("Level", ahead.LEVELS["agreement"], key="agreement_level")
scales = ahead.SCALES[:1] if level == "response" else ahead.SCALES
scale = right.selectbox(
    "Label scale", scales, key="agreement_scale", help="full: every rubric label is a category"
)


result = ui.computed(agreement, None if sample == ALL else sample, level, scale)
if not result["units"]:
    st.info(ui.fmt("No {} has labels from two or more reviewers yet.", level))
    rating_stats.agreement_section(None if sample == ALL else sample)
    st.stop()
st.caption(
    ui.fmt(
        "{} {}s labelled by two or more reviewers ({} by one: they count towards category "
        "shares only) · 95% intervals, method in the note column · undefined values give "
        "their reason",
        result["units"],
        level,
        result["single_rated_units"],
    )
)
st.dataframe(
    pd.DataFrame([claim_display.stat_row(n, result[n]) for n in STATISTICS]),
    hide_index=True,
    key="agreement_table",
)
if result["prevalence"]["note"]:
    st.info(result["prevalence"]["note"])
with st.expander("Label shares (prevalence)"):
    st.dataframe(
        pd.DataFrame(result["prevalence"]["labels"].items(), columns=["label", "share of ratings"]),
        hide_index=True,
        key="agreement_prevalence",
    )

st.subheader("Each pair of reviewers")
pairs = [
    {"pair": f"{p['a']} / {p['b']}", **claim_display.stat_row(name, p)}
    for name in PAIR_STATS
    for p in result[name]
]
st.dataframe(pd.DataFrame(pairs), hide_index=True, key="agreement_pairs")

st.subheader("Per reviewer")
for row in result["per_reviewer"]:
    for flag in row["flags"]:
        st.warning(ui.fmt("{}: {}", row["reviewer"], flag))
reviewers = pd.DataFrame(
    [
        {
            "reviewer": r["reviewer"],
            "labels": r["labels"],
            "agreement with others": r["agreement_with_others"].get("value"),
            "others low": r["agreement_with_others"].get("low"),
            "others high": r["agreement_with_others"].get("high"),
            "agreement with gold": r["agreement_with_gold"].get("value"),
            "shared units": r["shared_units"],
            "seconds per label": r["seconds_per_label"],
            "distribution": ", ".join(f"{k} {v}" for k, v in r["distribution"].items()),
            "flagged": bool(r["flags"]),
            "note": r["note"] or "",
        }
        for r in result["per_reviewer"]
    ]
)
st.dataframe(reviewers, hide_index=True, key="agreement_reviewers")
st.caption(
    ui.fmt(
        "Agreement with gold scores each reviewer against gold made without their own votes. "
        "A reviewer is flagged only with {} or more shared units.",
        result["min_shared_units"],
    )
)
if user.is_lead:
    fewest = st.number_input(
        "Fewest shared units before a reviewer can be flagged (saved for everyone)",
        min_value=1,
        value=int(result["min_shared_units"]),
        key="agreement_min_shared",
    )
    if fewest != result["min_shared_units"]:
        try:
            save_min_shared(store, int(fewest), actor=user.name)
            st.rerun()
        except AnnotateError as exc:
            ui.show_error(exc)

ui.chart(charts.over_time_chart, result["over_time"], key="agreement_over_time")
rating_stats.agreement_section(None if sample == ALL else sample)
ahead.start(user, "agreement")  # the other lead pages' default views, while this one is read
