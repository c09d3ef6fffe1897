"""Calibration: the judge against the reviewers' gold, per slice, with readiness and the alt-test."""

import pandas as pd
import streamlit as st

import ui
from annotate.agreement.calibration import (
    JUDGE_STATISTICS,
    calibration,
    load_thresholds,
    slice_summary,
)
from annotate.judge.labels import UnmappedJudgeLabelError
from annotate.judge.rubrics.card import judge_calibration, rubric_judge
from annotate.report import charts
from annotate.sampling.allocation import STRATUM_COLUMNS
from annotate.sampling.samples import list_samples
from annotate.store.assignments import judge_levels, judge_names
from annotate.store.samples import attribute_names
from widgets import ahead, claim_display, rating_stats
from widgets import calibration as calibration_widgets

user = ui.require_role("lead", "auditor")
st.set_page_config(layout="wide")  # app.py's does not reach the page (Streamlit 1.67)
store = ui.store()


is_lead = user.role == "lead"
CALIBRATION_TABS = ("The judge", "Per slice", "As a rater", "Disagreements", "Settings and report")
st.title("Calibration of the judge")
rating_stats.calibration_section()  # ratings on a scale: their own judges, in an expander

judges = ui.computed(judge_names)  # a scan of every verdict: once per change of the store
if not judges:
    st.info("No judge verdicts in the store: import traces with judge verdicts, or run the judge.")
    st.stop()
ALL = "(every labelled trace)"
left, middle, right = st.columns(3)
judge = left.selectbox("Judge", judges, key="calibration_judge")
sample = middle.selectbox(
    "Sample", [ALL] + [s["name"] for s in list_samples(store)], key="calibration_sample"
)
judged_at = ui.computed(judge_levels, judge)  # open at a level the judge judged at
opens_at = ahead.level_index(judged_at)
level = right.selectbox("Level", ahead.LEVELS["calibration"], opens_at, key="calibration_level")
slices = [*STRATUM_COLUMNS, "error_type", *attribute_names(store)]
by = st.multiselect("Slice by", slices, default=ahead.SLICES, key="calibration_by")

saved = load_thresholds(store)
scope = None if sample == ALL else sample
ours = rubric_judge(judge) is not None and scope is not None and level == "claim"
part = calibration_widgets.part_choice() if ours else None
try:
    if ours:  # our own judge: the held-out part by default, as on its calibration card
        report = ui.computed(judge_calibration, judge, scope, part, by, thresholds=saved)
    else:
        report = ui.computed(calibration, judge, scope, level, by, thresholds=saved)
except UnmappedJudgeLabelError as exc:
    ui.show_error(exc)
    with st.expander("Judge labels: how each maps to supported / unsupported / abstained", True):
        calibration_widgets.judge_label_mapping(store, judge, user, is_lead)
    st.stop()
if not report["n"]:
    if level not in judged_at:
        st.info(
            ui.fmt("{} gave no {}-level verdicts; choose Level: {}.", judge, level, judged_at[0])
        )
    else:
        st.info(ui.fmt("No {} has both a verdict and a gold label yet.", level))
    st.stop()
verdict = report["readiness"]
(st.success if verdict["ready"] else st.error)(ui.fmt("Overall: {}", verdict["verdict"]))
cover = report["coverage"]
st.caption(
    ui.fmt(
        "{} {}s with gold and a verdict · positive = unsupported · the judge abstained on {} "
        "of {} (left out of every rate)",
        report["n"],
        level,
        cover["abstained"],
        cover["units"],
    )
)

# Only the open tab runs and draws (ui.lazy_tabs): a visit draws the judge's statistics, not
# also the 200-row table of disagreements and the settings.
shown = ui.lazy_tabs(CALIBRATION_TABS, key="calibration_tab")
if judge_tab := shown["The judge"]:
    with judge_tab:
        left, right = st.columns([3, 4])  # the matrix (two 120 px cells, its axes) fits at 1400 px
        confusion = report["confusion"]
        ui.chart(
            charts.confusion_chart,
            confusion,
            where=left,
            width="content",
            key="calibration_confusion",
        )
        right.dataframe(
            pd.DataFrame(
                [claim_display.stat_row(n, report[n]) for n in JUDGE_STATISTICS]
                + [claim_display.stat_row("abstained share", cover["abstained_share"])]
            ),
            hide_index=True,
            key="calibration_judge_table",
        )
if slices_tab := shown["Per slice"]:
    with slices_tab:
        if report["slices"]:
            ui.chart(charts.slice_chart, report["slices"], key="calibration_slices_chart")
            rows = slice_summary(report["slices"])
            st.dataframe(pd.DataFrame(rows), hide_index=True, key="calibration_slices")
        else:
            st.info("No slices chosen: pick columns under Slice by.")
if rater_tab := shown["As a rater"]:
    with rater_tab:
        calibration_widgets.as_a_rater(report)
if disagreements_tab := shown["Disagreements"]:
    with disagreements_tab:
        found = report["disagreements"]
        st.subheader(ui.fmt("Disagreements with gold ({})", len(found)))
        if found:
            calibration_widgets.disagreements(store, found)
if settings_tab := shown["Settings and report"]:
    with settings_tab:
        with st.expander("Judge labels: how each maps to supported / unsupported / abstained"):
            calibration_widgets.judge_label_mapping(store, judge, user, is_lead)
        with st.expander("Readiness thresholds (saved; on lower bounds of 95% intervals)"):
            st.dataframe(
                pd.DataFrame(
                    [{"threshold on": k, "minimum lower bound": v} for k, v in saved.items()]
                ),
                hide_index=True,
                key="calibration_saved_thresholds",
            )
            if is_lead:
                calibration_widgets.thresholds_editor(store, saved, user)
            else:
                st.caption(
                    "The verdict and the report use these saved thresholds; only a lead edits them."
                )
        st.subheader("Report")
        st.caption("The report uses the saved thresholds above, whoever prepares it.")
        calibration_widgets.report_downloads(store, report, (judge, scope, level, by, saved), user)
ahead.start(user, "calibration")  # the other lead pages' default views
