"""Adjudicate: claims where reviewers disagree, every vote with its note, and a final label."""

import pandas as pd
import streamlit as st

import ui
from annotate.errors import AnnotateError, counted
from annotate.labelling.adjudication import adjudicate, disagreements, judge_disagreements
from annotate.labelling.session import claim_view, rubric_labels
from annotate.sampling.samples import list_samples
from widgets import claim_display, claims, path

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
        ui.fmt("{} where the judge disagrees with the gold label", counted(len(judged), "claim"))
    ):
        st.dataframe(pd.DataFrame(judged), hide_index=True, key="adjudicate_judge")
items = disagreements(store, sample, include_resolved=not open_only)
st.caption(ui.fmt("{} where reviewers disagree", counted(len(items), "claim")))
if not items:
    path.show_next_for(sample)
    st.stop()
_, labels = rubric_labels(store)
names = [item["label"] for item in labels]
by_name = {f"{i['trace_id']} · claim {i['claim_index'] + 1}": i for i in items}
item = by_name[st.selectbox("Claim", list(by_name), key="adjudicate_claim")]
claim_display.show_claim(claim_view(store, item["trace_id"], item["claim_index"]))
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


def record(item: dict) -> None:
    """Form callback for the claim the form was drawn for: it runs before the rerun, so a
    second click (which arrives with the cleared form) cannot interrupt the first."""
    key = (item["trace_id"], item["claim_index"])
    label, reason = st.session_state["adjudicate_label"], st.session_state["adjudicate_reason"]
    last = st.session_state.get("adjudicate_last")
    if last and last[0] == key and (not reason.strip() or last[1:] == (label, reason)):
        return  # the second click of a double click (cleared, or the same): it is stored
    try:
        adjudicate(store, user.name, item["trace_id"], item["claim_index"], label, reason)
    except AnnotateError as exc:
        st.session_state["adjudicate_error"] = str(exc)
        return
    st.session_state["adjudicate_last"] = (key, label, reason)
    st.session_state["adjudicate_reason"] = ""  # emptied once stored (see the form below)
    st.session_state["adjudicate_recorded"] = (
        f"Recorded {label} for {item['trace_id']} · claim {item['claim_index'] + 1}. "
        "The original votes stay."
    )  # the list follows on this rerun: a resolved claim leaves "Only unresolved"


# One form per claim: a click on the form of a claim no longer shown is dropped. Not
# clear_on_submit: Streamlit merges a double click's two submits while the first waits, the
# newer (emptied) values winning, and the reason typed would be lost (pages/users.py).
with st.form(f"adjudicate_form_{item['trace_id']}_{item['claim_index']}"):
    st.selectbox("Final label", names, key="adjudicate_label")
    st.text_area("Reason (auditors read it)", key="adjudicate_reason")
    st.form_submit_button(
        "Record final label", type="primary", on_click=ui.guard(record), args=(item,)
    )
if "adjudicate_error" in st.session_state:
    ui.show_error(st.session_state.pop("adjudicate_error"))
