"""Assign: give each sampled trace to k reviewers; or take the demo sample yourself in one click."""

import pandas as pd
import streamlit as st

import ui
from annotate.accounts.users import reviewer_names
from annotate.claims.extraction import claims_todo
from annotate.errors import AnnotateError, counted
from annotate.labelling.assignment import assign
from annotate.sampling.samples import list_samples
from annotate.store.assignments import reviewer_samples, sample_load
from widgets import path

user = ui.require_role("lead")
store = ui.store()
st.title("Assign")

samples = [s["name"] for s in list_samples(store)]
if not samples:
    st.info("Draw a sample first, on the Sample page.")
    st.page_link("pages/sample.py", label="Go to Sample")
    st.stop()

if "demo" in samples and "demo" not in reviewer_samples(store, user.name):
    st.subheader("Quick start")
    if st.button(
        "Assign the demo sample to me and start labelling", type="primary", key="assign_demo_me"
    ):
        try:
            assign(store, "demo", [user.name], per_trace=1, seed=0, assigned_by=user.name)
            st.switch_page("pages/label.py")
        except AnnotateError as exc:
            ui.show_error(exc)

sample = st.selectbox("Sample", samples, key="assign_sample")
people = reviewer_names(store)
chosen = st.multiselect("Reviewers", people, key="assign_reviewers")
left, middle, right = st.columns(3)
per_trace = left.number_input("Reviewers per trace", min_value=1, value=2, key="assign_per_trace")
overlap = middle.slider(
    "Overlap share (traces with k reviewers; the rest get one)", 0.0, 1.0, 1.0, key="assign_overlap"
)
seed = right.number_input("Seed for each reviewer's order", min_value=0, value=0, key="assign_seed")
st.caption(
    "Assigning again keeps what is covered; a reviewer left out keeps finished traces and loses the rest."
)
missing = len(claims_todo(store, sample))
anyway = False
if missing:
    st.warning(
        ui.fmt(
            "{} without claims yet: reviewers would not see them. Make their "
            "claims on the Sample page first.",
            counted(missing, "sampled trace"),
        )
    )
    st.page_link("pages/sample.py", label="Make claims on the Sample page")
    anyway = st.checkbox("Assign anyway, without those traces", key="assign_anyway")
if st.button("Assign", key="assign_run", disabled=bool(missing) and not anyway):
    try:
        report = assign(
            store, sample, chosen, int(per_trace), float(overlap), int(seed), assigned_by=user.name
        )
        st.success(
            ui.fmt("Added {}; released {}.", counted(report.added, "assignment"), report.released)
        )
    except AnnotateError as exc:
        ui.show_error(exc)

load = sample_load(store, sample)
if load:
    st.subheader("Load")
    st.dataframe(pd.DataFrame(load), hide_index=True, key="assign_load")
path.show_next_for(sample)
