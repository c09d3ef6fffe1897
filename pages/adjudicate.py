"""Adjudicate: claims where reviewers disagree, every vote with its note, and a final label."""

import pandas as pd
import streamlit as st

import ui
from annotate.errors import AnnotateError
from annotate.labelling.adjudication import adjudicate, disagreements, judge_disagreements
from annotate.labelling.session import claim_view, rubric_labels
from annotate.sampling.samples import list_samples
from widgets import claims, path

user = ui.require_role("lead")
store = ui.store()
st.title("Adjudicate")

samples = [s["name"] for s in list_samples(store)]
if not samples:
    st.info("No samples yet: draw one on the Sample page, assign it, and let reviewers label.")
    st.page_link("pages/sample.py", label="Go to Sample")
    st.stop()
sample = st.selectbox("Sample", samples, key="adjudicate_sample")
claims.fix_flagged(store, user, sample)
recorded = st.session_state.pop("adjudicate_recorded", None)
if recorded:
    st.success(ui.md(recorded))
open_only = st.toggle("Only unresolved", value=True, key="adjudicate_open_only")
judged = judge_disagreements(store, sample)
if judged:
    with st.expander(
        ui.fmt("{} claims where the judge disagrees with the gold label", len(judged))
    ):
        st.dataframe(pd.DataFrame(judged), hide_index=True, key="adjudicate_judge")
items = disagreements(store, sample, include_resolved=not open_only)
st.caption(ui.fmt("{} claims where reviewers disagree", len(items)))
if not items:
    path.show_next_for(sample)
    st.stop()
_, labels = rubric_labels(store)
names = [item["label"] for item in labels]
by_name = {f"{i['trace_id']} · claim {i['claim_index'] + 1}": i for i in items}
item = by_name[st.selectbox("Claim", list(by_name), key="adjudicate_claim")]
ui.show_claim(claim_view(store, item["trace_id"], item["claim_index"]))
st.subheader("Votes")
for vote in item["votes"]:
    said = ui.fmt("**{}**: {} ({})", vote["reviewer"], vote["label"], vote["error_type"])
    st.write(said if vote["error_type"] else ui.fmt("**{}**: {}", vote["reviewer"], vote["label"]))
    if vote["note"]:
        st.text(vote["note"])
if item["adjudication"]:
    st.info(
        ui.fmt(
            "Adjudicated: {} by {}",
            item["adjudication"]["label"],
            item["adjudication"]["adjudicator"],
        )
    )
with st.form("adjudicate_form", clear_on_submit=True):
    label = st.selectbox("Final label", names, key="adjudicate_label")
    reason = st.text_area("Reason (auditors read it)", key="adjudicate_reason")
    if st.form_submit_button("Record final label", type="primary"):
        try:
            adjudicate(store, user.name, item["trace_id"], item["claim_index"], label, reason)
            st.session_state["adjudicate_recorded"] = (
                f"Recorded {label} for {item['trace_id']} · claim {item['claim_index'] + 1}. "
                "The original votes stay."
            )
            st.rerun()  # the list follows: a resolved claim leaves "Only unresolved"
        except AnnotateError as exc:
            ui.show_error(exc)
