"""Canary: make canary-trap suites, download them for replay, import the replayed responses,
and compare pass rates (followed the context, no world-knowledge leak) per attribute."""

import pandas as pd
import streamlit as st

import ui
from annotate.canary.scoring import response_rows, score
from annotate.canary.suite import export_jsonl, list_suites
from annotate.errors import AnnotateError
from annotate.store.samples import attribute_names
from widgets import canary as widgets
from widgets import downloads

user = ui.require_role("lead", "auditor")
is_lead = user.role == "lead"
st.title("Canary")
st.caption(
    "Copies of sampled contexts with their numbers, dates and names changed to fictive values. "
    "Replay them through your system: an answer with the fictive values followed the context; "
    "one with the original values answered from world knowledge. Answers with neither are "
    "labelled blind by reviewers (sample canary:SUITE on the Assign page)."
)

try:
    store = ui.store()
    suites = list_suites(store)
    attributes = attribute_names(store)
except AnnotateError as exc:
    ui.show_error(exc)
    st.stop()

if is_lead:
    with st.expander("Make a suite", expanded=not suites):
        widgets.make_form(store, user)
    suites = list_suites(store)

if not suites:
    st.caption("No canary suites yet.")
    st.stop()

st.dataframe(
    pd.DataFrame(suites)[["name", "sample", "rule", "swap_names", "seed", "items", "responses"]],
    hide_index=True,
    key="canary_suites",
)
name = st.selectbox("Suite", [s["name"] for s in suites], key="canary_suite")
downloads.download_button(
    "Download the suite (JSON Lines)",
    lambda: export_jsonl(store, name),
    file_name=f"{name}.jsonl",
    mime="application/jsonl",
    key="canary_download",
)
if is_lead:
    widgets.import_form(store, name, user)

st.subheader("Pass rates")
by = st.multiselect("Side by side by", ["model", "feature", *attributes], key="canary_by")
try:
    document = score(store, name, by)
except AnnotateError as exc:
    ui.show_error(exc)
    st.stop()
if not document["rows"]:
    st.caption("No replayed responses imported for this suite yet.")
    st.stop()
frame = widgets.scores_frame(document["rows"])
st.dataframe(frame, hide_index=True, key="canary_scores")
ui.chart(widgets.pass_rate_chart, frame)
with st.expander("Each response"):
    st.dataframe(pd.DataFrame(response_rows(store, name)), hide_index=True)
