"""Home: a reviewer's own queue and progress; for leads and auditors the store at a glance and a
read-only look at any trace with the judge's verdicts (never shown to reviewers).

pandas and altair are imported only below the reviewer's part: a reviewer's session keeps the
process heap small (Streamlit's reruns are cheaper on a small heap).
"""

import streamlit as st

import ui
from annotate.errors import AnnotateError
from annotate.labelling.session import progress
from annotate.store.assignments import reviewer_samples
from annotate.store.status import list_trace_ids, store_status, trace_detail

user = ui.require_role("reviewer", "lead", "auditor")
st.title("annotate")
st.caption("Human calibration for LLM hallucination judges")


def reviewer_home() -> None:
    """Only the reviewer's own queue: no trace browser, no judge, no other reviewer."""
    store = ui.store()
    samples = reviewer_samples(store, user.name)
    st.subheader("Your queue")
    if not samples:
        st.info("Nothing is assigned to you yet. A lead assigns samples to reviewers.")
        return
    for name in samples:
        counts = progress(store, user.name, name)
        st.progress(
            counts["done"] / max(counts["assigned"], 1),
            text=ui.fmt("{}: {} / {} claims done", name, counts["done"], counts["assigned"]),
        )
    if st.button("Label", type="primary", key="home_go_label"):
        st.switch_page("pages/label.py")


if user.role == "reviewer":
    reviewer_home()
    st.stop()

import altair as alt  # noqa: E402 - leads and auditors only (see the docstring)
import pandas as pd  # noqa: E402

from widgets import ahead, warm_up  # noqa: E402

try:
    store = ui.store()
    status = ui.computed(store_status)
except AnnotateError as exc:
    ui.show_error(exc)
    st.stop()

if user.role == "lead":
    from widgets import path  # noqa: E402 - leads only

    path.show_path()
if not status["traces"]:
    st.info("The store is empty. Import a trace file on the Import page.")
    st.stop()

total = status["traces"]
cols = st.columns(5)
cols[0].metric("Traces", f"{total:,}")
cols[1].metric("Judgeable", f"{status['judgeable']:,}", help="traces with a non-empty context")
cols[2].metric("With claims", f"{status['traces_with_claims'] / total:.0%}")
cols[3].metric("With judge verdicts", f"{status['traces_with_judge_verdicts'] / total:.0%}")
cols[4].metric("Label events", f"{status['label_events']:,}")


def _bar(counts: dict[str, int], title: str) -> alt.Chart:
    frame = pd.DataFrame({"value": list(counts), "traces": list(counts.values())})
    return (
        alt.Chart(frame, title=title)
        .mark_bar()
        .encode(
            x=alt.X("traces:Q"),
            y=alt.Y("value:N", sort="-x", title=None),
            tooltip=["value", "traces"],
        )
        .properties(height=alt.Step(24))
    )


charts = st.columns(3)
for column, key, title in zip(
    charts,
    ("by_feature", "by_risk_category", "by_model"),
    ("Traces by feature", "Traces by risk category", "Traces by model"),
    strict=True,
):
    ui.chart(_bar, status[key], title, where=column)

st.subheader("Imports")
st.dataframe(pd.DataFrame(status["imports"]), hide_index=True, key="home_imports")

st.subheader("Browse a trace")
features = ["(all)", *status["by_feature"]]
left, right = st.columns(2)
feature = left.selectbox("Feature", features, key="home_feature")
prefix = right.text_input("Trace id starts with", key="home_prefix")
ids = list_trace_ids(
    store, None if feature == "(all)" else feature, prefix=prefix.strip(), limit=500
)
if len(ids) == 500:
    st.caption("Showing the first 500 matching trace ids; narrow by feature or id to see others.")
trace_id = st.selectbox("Trace", ids, key="home_trace")
detail = trace_detail(store, trace_id) if trace_id else None
if detail:
    st.write(
        ui.fmt(
            "{} · {} · {} · judgeable: {}",
            detail["feature"] or "(no feature)",
            detail["risk_category"] or "(no risk category)",
            detail["model"] or "(no model)",
            detail["judgeable"],
        )
    )
    ui.show_text("Request", detail["request"])
    ui.show_text("Response", detail["response"])
    for item in detail["contexts"]:
        ui.show_text(
            f"Context {item['position'] + 1}: {item['source'] or 'no source'}", item["text"]
        )
    if detail["claims"]:
        st.caption("Claims")
        st.dataframe(pd.DataFrame(detail["claims"]), hide_index=True)
    if detail["judge_verdicts"]:
        st.caption("Production judge verdicts (as imported)")
        st.dataframe(pd.DataFrame(detail["judge_verdicts"]), hide_index=True)

# Once Home is drawn (threads started earlier slowed its own drawing): the lead pages' default
# views, once per change of the store (their worker imports the statistics); else the
# statistics' heavy imports alone, once per process (two threads at once slowed both).
if not ahead.start(user):
    warm_up.warm_up_statistics()
