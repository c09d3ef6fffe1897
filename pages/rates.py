"""Rates: hallucination rates per slice, four estimators side by side with their intervals, the
threshold states, trend and drift, error types, the judge's scores, the label budget, downloads."""

import streamlit as st

import ui
from annotate.errors import AnnotateError
from annotate.judge.default import choose_judge
from annotate.rates import charts
from annotate.rates.gate import load_threshold
from annotate.rates.inputs import SLICE_COLUMNS
from annotate.rates.view import rates_view, scores_view, trend_view
from annotate.sampling.samples import list_samples
from annotate.store.samples import attribute_names
from widgets import ahead, rating_stats
from widgets import connectors as connector_widgets
from widgets import rates as rates_widgets

user = ui.require_role("lead", "auditor")
store = ui.store()

RATES_TABS = ("Rates", "Trend", "Errors and scores", "Label budget", "Threshold and exports")
st.title("Hallucination rates")
samples = [s["name"] for s in list_samples(store)]
if not samples:
    st.info("No sample yet: draw one on the Sample page, label it, and its rates appear here.")
    st.stop()
left, middle, right = st.columns(3)
sample = left.selectbox("Sample", samples, key="rates_sample")
level = middle.selectbox("Level", ahead.RATES_LEVELS, key="rates_level")
choice = ui.computed(choose_judge, sample)  # the current rubric's judge, else the most verdicts
judges = choice.judges
judge = right.selectbox("Judge", judges or ["(none)"], key="rates_judge")
asked = judge if judges else None  # what the views are asked for (None: the default judge)
if judges and judge == choice.judge:
    right.caption(ui.fmt("Default: {}", choice.reason))
by = st.multiselect(
    "Slice by", [*SLICE_COLUMNS, *attribute_names(store)], default=ahead.SLICES, key="rates_by"
)
threshold = load_threshold(store)

try:  # once per setting until the store changes: a revisit or another widget reads it
    view = ui.computed(rates_view, sample, tuple(by), asked, level, threshold)
    inputs, rows = view["inputs"], view["rows"]
except AnnotateError as exc:
    ui.show_error(exc)
    st.stop()

st.caption(
    ui.fmt(
        "{} rate · threshold {} · ok: interval under it, warning: it is inside, breach: above · "
        "judge {}",
        level,
        f"{threshold:.0%}",
        inputs.judge or "none",
    )
)
if inputs.unmapped:
    st.warning(
        ui.fmt(
            "Judge labels with no mapping are left out of the judge's rates: {} "
            "(map them on the Calibration page).",
            ", ".join(f"{k} ({v})" for k, v in inputs.unmapped.items()),
        )
    )
# Each tab runs and draws only while open (a tab change reruns the page): a first visit
# computes and draws the rates alone, and the trend and the label budget when asked for (the
# worker, widgets/ahead.py, computes them ahead for the default settings).
shown = ui.lazy_tabs(RATES_TABS, key="rates_tab")
if rates_tab := shown["Rates"]:
    with rates_tab:
        ui.chart(charts.rates_chart, rows, threshold, key="rates_chart")
        st.dataframe(charts.rates_frame(rows), hide_index=True, key="rates_table")
        st.caption(
            "weighted_human: reviewers' gold weighted by the sample's inclusion probabilities · "
            "judge_raw: the judge over every trace (a dashboard's number) · judge_corrected: "
            "PPI++ per stratum · rogan_gladen: cross-check. The method column says more."
        )
if trend_tab := shown["Trend"]:
    with trend_tab:
        window = st.selectbox("Window", ahead.WINDOWS, key="rates_window")
        found = ui.computed(trend_view, sample, tuple(by), inputs.judge, window, level, threshold)
        if not ui.chart(charts.trend_chart, found["rows"], window, key="rates_trend_chart"):
            st.info("No window has a number yet.")
        rates_widgets.drift_alerts(found)
if errors_tab := shown["Errors and scores"]:
    with errors_tab:
        st.subheader("Error types (claims whose gold is unsupported, weighted)")
        kinds = view["error_types"]
        if kinds:
            st.dataframe(rates_widgets.error_frame(kinds), hide_index=True, key="rates_error_types")
        else:
            st.info("No unsupported claims in gold yet.")
        st.subheader("The judge's scores")
        rates_widgets.score_summary(ui.computed(scores_view, inputs.sample, tuple(by), asked))
        rating_stats.rates_section(sample)
if budget_tab := shown["Label budget"]:
    with budget_tab:
        rates_widgets.label_budget(store, inputs, by, asked, user)
if exports_tab := shown["Threshold and exports"]:
    with exports_tab:
        st.subheader("Threshold")
        rates_widgets.threshold_setting(store, threshold, user)
        st.subheader("Downloads")
        rates_widgets.downloads(store, inputs, rows, by, threshold, user)
        if user.role == "lead":  # writes into the tracing server the sample's traces came from
            st.subheader("Send to Phoenix or MLflow")
            connector_widgets.push_section(store, sample, inputs.judge, user)
ahead.start(user, "rates")  # the other lead pages' default views
