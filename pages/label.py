"""Label: one claim at a time against the context, keyboard first, blind to the judge.

The claim area is a fragment: a verdict reruns only it, so the next claim appears
without a full page reload. Each verdict is committed before the next claim is shown.
"""

import time

import streamlit as st

import ui
from annotate.claims import FLAG_REASONS, flag_claim
from annotate.errors import AnnotateError
from annotate.labelling import (
    SKIP_REASONS,
    judge_feedback,
    next_claim,
    previous_claim,
    progress,
    record_verdict,
    reviewer_queue,
    rubric_labels,
    skip_claim,
    unsupported_labels,
)
from annotate.store.assignments import reviewer_samples
from annotate.store.schema import ERROR_TYPES

user = ui.require_role("reviewer", "lead")
store = ui.store()
st.title("Label")

samples = reviewer_samples(store, user.name)
if not samples:
    st.info(
        "Nothing is assigned to you yet."
        + (" Assign a sample on the Assign page." if user.is_lead else "")
    )
    st.stop()
sample = st.selectbox("Sample", samples, key="label_sample")
version, labels = rubric_labels(store)
flagged = unsupported_labels(store)
session = st.session_state.setdefault("label_session", {"started": time.time(), "count": 0})


CURRENT = f"label_current::{sample}"


def _submit(label: str) -> None:
    """Button callback: runs before the rerun, so the next claim is drawn after the commit."""
    view = st.session_state.get("label_back") or st.session_state.get(CURRENT)
    error_type = st.session_state.get("label_error_type")
    try:
        record_verdict(
            store,
            user.name,
            view,
            label,
            error_type if label in flagged else None,
            st.session_state.get("label_note", ""),
        )
    except AnnotateError as exc:
        st.session_state["label_error"] = str(exc)
        return
    session["count"] += 1
    st.session_state["label_last"] = view
    st.session_state.pop(CURRENT, None)
    st.session_state.pop("label_back", None)
    st.session_state["label_note"] = ""
    st.session_state["label_error_type"] = None


def _back() -> None:
    st.session_state["label_back"] = previous_claim(store, user.name, sample)


def _flag() -> None:
    view = st.session_state.get("label_back") or st.session_state.get(CURRENT)
    if view is not None:
        flag_claim(
            store, view.trace_id, view.claim_index, user.name, st.session_state["label_flag_reason"]
        )
        st.session_state["label_flagged"] = True


def _skip() -> None:
    view = st.session_state.get(CURRENT)
    if view is not None:
        skip_claim(
            store, user.name, view, st.session_state.get("label_skip_reason", SKIP_REASONS[0])
        )
        st.session_state.pop(CURRENT, None)


@st.fragment
def claim_area() -> None:
    items = reviewer_queue(store, user.name, sample)  # one read serves the claim and the progress
    view = st.session_state.get("label_back") or st.session_state.get(CURRENT)
    if view is None:
        view = next_claim(store, user.name, sample, items)
        st.session_state[CURRENT] = view
    counts = progress(store, user.name, sample, items)
    minutes = max((time.time() - session["started"]) / 60, 1 / 60)
    st.progress(
        counts["done"] / max(counts["assigned"], 1),
        text=(
            f"{counts['done']} / {counts['assigned']} claims done in {sample} · this session "
            f"{session['count']} verdicts, {session['count'] / minutes:.1f} a minute"
        ),
    )
    if "label_error" in st.session_state:
        st.error(st.session_state.pop("label_error"))
    last = st.session_state.get("label_last")
    if last is not None:
        for verdict in judge_feedback(store, user.name, last):
            st.caption(f"Judge on your last claim ({verdict['level']}): {verdict['label']}")
    if view is None:
        st.success("Your queue for this sample is empty. Thank you!")
        return
    if st.session_state.get("label_back") is not None:
        st.warning("Changing your last verdict: the new one is a new event; the old one stays.")
    ui.show_claim(view)
    columns = st.columns(len(labels))
    for number, (column, item) in enumerate(zip(columns, labels, strict=True), start=1):
        column.button(
            f"{number} · {item['label'].replace('_', ' ')}",
            key=f"label_button_{item['label']}",
            help=item["definition"],
            shortcut=str(number),
            on_click=_submit,
            args=(item["label"],),
            width="stretch",
        )
    left, middle, right = st.columns([2, 3, 2])
    left.selectbox("Error type (unsupported labels)", [None, *ERROR_TYPES], key="label_error_type")
    middle.text_input("Note (optional)", key="label_note")
    right.selectbox("Skip reason", SKIP_REASONS, key="label_skip_reason")
    back, skip, _ = st.columns([1, 1, 4])
    back.button(
        "Back",
        key="label_back_button",
        shortcut="b",
        help="change your last verdict",
        on_click=_back,
    )
    skip.button("Skip", key="label_skip", shortcut="s", on_click=_skip)
    with st.expander("Badly extracted claim?"):
        st.selectbox("What is wrong", FLAG_REASONS, key="label_flag_reason")
        st.button("Flag for the lead", key="label_flag", on_click=_flag)
        if st.session_state.pop("label_flagged", False):
            st.caption("Flagged. Label it as best you can, or skip it.")


claim_area()
