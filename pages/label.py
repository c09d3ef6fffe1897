"""Label: one claim at a time against the context, keyboard first, blind to the judge.

The claim area is a fragment: a verdict reruns only it, so the next claim appears
without a full page reload. Each verdict is committed before the next claim is shown.
"""

import hashlib
import time

import streamlit as st

import ui
from annotate.labelling.session import (
    judge_feedback,
    next_claim,
    progress,
    reviewer_queue,
    rubric_labels,
    unsupported_labels,
)
from annotate.store.assignments import reviewer_samples
from widgets.label import Desk

user = ui.require_role("reviewer", "lead")
store = ui.store()
st.title("Label")

samples = reviewer_samples(store, user.name)
if not samples:
    st.info(
        "Nothing is assigned to you yet. Assign a sample on the Assign page."
        if user.is_lead
        else "Nothing is assigned to you yet."
    )
    st.stop()
sample = st.selectbox("Sample", samples, key="label_sample")
version, labels = rubric_labels(store)
flagged = unsupported_labels(store)
session = st.session_state.setdefault("label_session", {"started": time.time(), "count": 0})


desk = Desk(store, user, sample, flagged, session)


@st.fragment
def claim_area() -> None:
    if ui.session_ended():  # a guarded click found it signed out, deactivated or re-passworded
        st.rerun(scope="app")
    items = reviewer_queue(store, user.name, sample)  # one read serves the claim and the progress
    view = desk.showing()
    if view is None:
        view = next_claim(store, user.name, sample, items)
        st.session_state[desk.current] = view
    counts = progress(store, user.name, sample, items)
    minutes = max((time.time() - session["started"]) / 60, 1 / 60)
    st.progress(
        counts["done"] / max(counts["assigned"], 1),
        text=ui.fmt(
            "{} / {} claims done in {} · this session {} verdicts, {} a minute",
            counts["done"],
            counts["assigned"],
            sample,
            session["count"],
            f"{session['count'] / minutes:.1f}",
        ),
    )
    if "label_error" in st.session_state:
        st.error(ui.md(st.session_state.pop("label_error")))
    last = st.session_state.get("label_last")
    if last is not None:
        for verdict in judge_feedback(store, user.name, last):
            st.caption(
                ui.fmt("Judge on your last claim ({}): {}", verdict["level"], verdict["label"])
            )
    if desk.stale_question():
        return
    if view is None:
        st.success("Your queue for this sample is empty. Thank you!")
        return
    if st.session_state.get("label_back") is not None:
        st.warning("Changing your last verdict: the new one is a new event; the old one stays.")
    ui.show_claim(view)
    # Keys name this showing of the claim: a press meant for the previous claim reaches the
    # previous claim's buttons (or nothing), never this claim's.
    shown = hashlib.sha256(view.key.encode()).hexdigest()[:12]
    columns = st.columns(len(labels))
    for number, (column, item) in enumerate(zip(columns, labels, strict=True), start=1):
        column.button(
            ui.fmt("{} · {}", number, item["label"].replace("_", " ")),
            key=f"label_button_{item['label']}_{shown}",
            help=ui.md(item["definition"]),
            shortcut=str(number),
            on_click=ui.guard(desk.submit),
            args=(item["label"], view),
            width="stretch",
        )
    desk.controls(view, shown)


claim_area()
