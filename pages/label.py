"""Label: one claim at a time against the context, keyboard first, blind to the judge.

The claim area is a fragment: a verdict reruns only it, so the next claim appears
without a full page reload. Each verdict is committed before the next claim is shown.
"""

import hashlib
import time

import streamlit as st

import ui
from annotate.claims import FLAG_REASONS, flag_claim
from annotate.errors import AnnotateError
from annotate.labelling import (
    SKIP_REASONS,
    ClaimView,
    StaleVerdictError,
    judge_feedback,
    min_dwell,
    next_claim,
    previous_claim,
    progress,
    record_verdict,
    reviewer_queue,
    rubric_labels,
    skip_claim,
    unsupported_labels,
    view_after_stale,
)
from annotate.store.assignments import reviewer_samples
from annotate.store.schema import ERROR_TYPES

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


CURRENT = f"label_current::{sample}"


def _showing() -> ClaimView | None:
    return st.session_state.get("label_back") or st.session_state.get(CURRENT)


def _submit(label: str, view: ClaimView) -> None:
    """Button callback for the claim the button was drawn for (never "whatever is current").

    Runs before the rerun, so the next claim is drawn after the commit."""
    error_type = st.session_state.get("label_error_type")
    try:
        record_verdict(
            store,
            user.name,
            view,
            label,
            error_type if label in flagged else None,
            st.session_state.get("label_note", ""),
            min_dwell=min_dwell(store),
        )
    except StaleVerdictError as exc:
        st.session_state["label_stale"] = (view, label, exc.newer)
        return
    except AnnotateError as exc:
        st.session_state["label_error"] = str(exc)
        return
    _done_with(view)
    session["count"] += 1
    st.session_state["label_last"] = view
    st.session_state["label_note"] = ""
    st.session_state["label_error_type"] = None


def _done_with(view: ClaimView) -> None:
    """Move on only if `view` is still the claim on screen (a late repeat changes nothing)."""
    st.session_state.pop("label_stale", None)
    shown = _showing()
    if shown is not None and shown.key == view.key:
        st.session_state.pop(CURRENT, None)
        st.session_state.pop("label_back", None)


def _keep_newer() -> None:
    view, _, _ = st.session_state["label_stale"]
    _done_with(view)


def _change_to_mine() -> None:
    view, label, _ = st.session_state.pop("label_stale")
    _submit(label, view_after_stale(store, user.name, view))


def _back() -> None:
    st.session_state.pop("label_stale", None)
    st.session_state["label_back"] = previous_claim(store, user.name, sample)


def _flag(view: ClaimView) -> None:
    flag_claim(
        store, view.trace_id, view.claim_index, user.name, st.session_state["label_flag_reason"]
    )
    st.session_state["label_flagged"] = True


def _skip(view: ClaimView) -> None:
    try:
        skip_claim(
            store, user.name, view, st.session_state.get("label_skip_reason", SKIP_REASONS[0])
        )
    except AnnotateError as exc:
        st.session_state["label_error"] = str(exc)
        return
    _done_with(view)


def _stale_question() -> bool:
    """A newer verdict exists for the claim submitted: show it, ask to keep or change."""
    stale = st.session_state.get("label_stale")
    if stale is None:
        return False
    view, label, newer = stale
    st.warning(
        ui.fmt(
            "This claim already has your verdict **{}**, recorded at {} from another tab, "
            "device or Back. Nothing was stored from this tab.",
            newer["label"],
            f"{newer['created_at']:%H:%M:%S}",
        )
    )
    keep, change, _ = st.columns([2, 2, 3])
    keep.button(
        ui.fmt("Keep {}", newer["label"]), key="label_stale_keep", on_click=ui.guard(_keep_newer)
    )
    change.button(
        ui.fmt("Change it to {}", label),
        key="label_stale_change",
        on_click=ui.guard(_change_to_mine),
    )
    return True


@st.fragment
def claim_area() -> None:
    if ui.current_user() is None:  # signed out, deactivated or a new password elsewhere
        st.rerun(scope="app")
    items = reviewer_queue(store, user.name, sample)  # one read serves the claim and the progress
    view = _showing()
    if view is None:
        view = next_claim(store, user.name, sample, items)
        st.session_state[CURRENT] = view
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
    if _stale_question():
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
            on_click=ui.guard(_submit),
            args=(item["label"], view),
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
        on_click=ui.guard(_back),
    )
    skip.button(
        "Skip", key=f"label_skip_{shown}", shortcut="s", on_click=ui.guard(_skip), args=(view,)
    )
    with st.expander("Badly extracted claim?"):
        st.selectbox("What is wrong", FLAG_REASONS, key="label_flag_reason")
        st.button(
            "Flag for the lead", key=f"label_flag_{shown}", on_click=ui.guard(_flag), args=(view,)
        )
        if st.session_state.pop("label_flagged", False):
            st.caption("Flagged. Label it as best you can, or skip it.")


claim_area()
