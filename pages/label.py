"""Label: one claim at a time against the context, keyboard first, blind to the judge.

The claim, its details and the verdict controls sit in one column and the context scrolls on
its own beside them, so the buttons stay in view whatever the context's length. The claim
area is a fragment: a verdict reruns only it. Each verdict is committed before the next
claim is shown.
"""

import hashlib
import time

import streamlit as st

import ui
from annotate.errors import counted
from annotate.labelling.session import rubric_labels, unsupported_labels
from annotate.store.assignments import reviewer_samples
from widgets import claim_display
from widgets import label_panels as panels
from widgets.label import HIDE_SHOWN, Desk
from widgets.ratings import rating_step, ratings_now

user = ui.require_role("reviewer", "lead")
st.set_page_config(layout="wide")  # the claim column and the context side by side
store = ui.store()
head, keys = st.columns([6, 1], vertical_alignment="bottom")
head.title("Label")

samples = reviewer_samples(store, user.name)
if not samples:
    st.info(
        "Nothing is assigned to you yet. Assign a sample on the Assign page."
        if user.is_lead
        else "Nothing is assigned to you yet."
    )
    st.stop()
version, labels = rubric_labels(store)
if keys.button("? Keys", key="label_keys_help", help="keyboard shortcuts (press ?)"):
    panels.shortcuts(labels)
panels.keyboard_script()
st.html(HIDE_SHOWN)  # the field naming the claim on screen is for the browser to send, not to see
panels.rubric_sidebar(store, labels)
sample = st.selectbox("Sample", samples, key="label_sample")
flagged = unsupported_labels(store)
session = st.session_state.setdefault("label_session", {"started": time.time(), "count": 0})


desk = Desk(store, user, sample, flagged, session)


def verdict_buttons(view) -> None:
    """One key per label for every claim (the browser keeps the buttons); a press is for the
    claim the browser reports on screen (widgets.label.SHOWN)."""
    given = (st.session_state.get("label_given") or {}).get("label")
    for number, item in enumerate(labels, start=1):
        st.button(
            ui.fmt("{} · {}", number, item["label"].replace("_", " ")),
            key=f"label_button_{item['label']}_",
            help=ui.md(item["definition"]),
            shortcut=str(number),
            type="primary" if item["label"] == given else "secondary",
            on_click=ui.guard(desk.press),
            args=(item["label"],),
            width="stretch",
            disabled=view.final,  # seen the judge on this trace: the verdict stays
        )


@st.fragment
def claim_area() -> None:
    if ui.session_ended():  # a guarded click found it signed out, deactivated or re-passworded
        st.rerun(scope="app")
    held = desk.state  # the queue, traces, questions: read again only if the store moved
    held.refresh(store)
    view = desk.showing()
    if view is None:
        view = held.next_view(store)
        st.session_state[desk.current] = view
    counts = held.progress()
    minutes = max((time.time() - session["started"]) / 60, 1 / 60)
    progress = claim_display.progress_html(
        counts["done"],
        counts["assigned"],
        f"{counts['done']} / {counts['assigned']} claims done in {sample} · this session "
        f"{counted(session['count'], 'verdict')}, {session['count'] / minutes:.1f} a minute",
    )
    if "label_error" in st.session_state:
        st.error(ui.md(st.session_state.pop("label_error")))
    if "label_notice" in st.session_state:  # a press answered apart from the claim on screen
        st.info(ui.md(st.session_state.pop("label_notice")))
    last = st.session_state.get("label_last")
    due = ratings_now(store, user, last)
    if due:  # the response's ratings come before the judge
        st.html(progress)
        rating_step(store, user, last, due)
        return
    if last is not None:
        for verdict in held.judge_feedback(store, last):  # the trace just finished
            unit = verdict["level"]
            if verdict["claim_index"] is not None and unit == "claim":
                unit = f"claim {verdict['claim_index'] + 1}"
            st.caption(ui.fmt("Judge on this trace ({}): {}", unit, verdict["label"]))
    if view is None or "label_stale" in st.session_state:  # no claim to draw the progress with
        st.html(progress)
        if not desk.stale_question():
            st.success("Your queue for this sample is empty. Thank you!")
            panels.revisit(store, desk)
        return
    # The token names this showing of the claim: a press made while the previous claim was on
    # screen reports the previous claim's token, and is taken as meant for it, never this one.
    shown = hashlib.sha256(view.key.encode()).hexdigest()[:12]
    left, right = st.columns([5, 6], gap="medium")
    with left:
        panels.changing_notice(view)  # Back or Reopen: a change, or a final verdict
        details = claim_display.show_claim_box(view, above=progress)
        desk.show_token(view, shown)  # after the claim: a token never precedes its claim
        mine = held.questions  # this claim's answers and the list
        panels.claim_answers(mine, view)
        verdict_buttons(view)
        desk.controls(view, shown)
        panels.ask_box(desk, view, shown)
        panels.revisit(store, desk)
        panels.my_questions_list(mine)
    with right:  # one element that scrolls on its own: a container would be one more block
        claim_display.show_context(view, details, height=claim_display.LABEL_CONTEXT_HEIGHT)
    held.prepare(store, view)  # the traces ahead, read while the reviewer reads this claim


desk.moves()  # Back, Skip, the panels' toggles: outside the fragment (see Desk.moves)
claim_area()
