"""The Label page's verdict flow: button callbacks, the stale-verdict question and the
controls under a claim. Every callback is bound to the claim its button was drawn for."""

from __future__ import annotations

import streamlit as st

import ui
from annotate.claims.extraction import FLAG_REASONS, flag_claim
from annotate.errors import AnnotateError
from annotate.labelling.desk_state import DeskState
from annotate.labelling.questions import ask_question
from annotate.labelling.session import (
    SKIP_REASONS,
    ClaimView,
    StaleVerdictError,
    my_verdict,
    previous_claim,
    reopen_claim,
    skip_claim,
    store_verdict,
    view_after_stale,
)
from annotate.store import Store
from annotate.store.schema import ERROR_TYPES

# Which claim the browser shows, as the browser says with each press: a hidden field drawn
# right after the claim holds the claim's token, and every rerun the browser asks for sends
# the fields' values it has, so a press reports the claim that was on screen when it was
# made. The verdict buttons keep one key for every claim: keys that named the claim made the
# browser build seven new buttons each press (most of its drawing time), and a fixed key alone
# would let a press made before the next claim arrived land on that next claim.
SHOWN = "label_shown"
VIEWS = "label_views"  # token -> the ClaimView shown under it, the last KEEP_VIEWS showings
KEEP_VIEWS = 20
HIDE_SHOWN = "<style>.st-key-label_shown { display: none !important; }</style>"


NOT_SAID = (
    "Nothing was stored for that press ({}): the page did not say which claim it showed. "
    "Press again."
)


class Desk:
    """One reviewer at one sample: what is on screen, and what each button does to it."""

    def __init__(self, store: Store, user, sample: str, flagged, session: dict) -> None:
        self.store, self.user, self.sample = store, user, sample
        self.flagged, self.session = flagged, session
        self.current = f"label_current::{sample}"
        held = f"label_desk::{sample}"  # the queue, traces ahead, questions: per session
        if not isinstance(st.session_state.get(held), DeskState):
            st.session_state[held] = DeskState(user.name, sample)
        self.state: DeskState = st.session_state[held]

    def showing(self) -> ClaimView | None:
        return st.session_state.get("label_back") or st.session_state.get(self.current)

    def show_token(self, view: ClaimView, token: str) -> None:
        """The hidden field naming the claim just drawn (call it right after the claim)."""
        views = st.session_state.setdefault(VIEWS, {})
        views[token] = view
        for old in list(views)[:-KEEP_VIEWS]:
            del views[old]
        st.session_state[SHOWN] = token
        st.text_input("Claim shown", key=SHOWN, label_visibility="collapsed")

    def on_screen(self) -> ClaimView | None:
        """The claim the browser showed when the press was made (None: it did not say)."""
        return st.session_state.get(VIEWS, {}).get(st.session_state.get(SHOWN))

    def press(self, label: str) -> None:
        """A verdict button's callback: `label` on the claim the browser showed."""
        view = self.on_screen()
        if view is None:
            st.session_state["label_error"] = NOT_SAID.format(label)
            return
        self.submit(label, view)

    def press_skip(self) -> None:
        view = self.on_screen()
        if view is None:
            st.session_state["label_error"] = NOT_SAID.format("skip")
            return
        shown = self.showing()  # Skip is drawn outside the claim's area (Desk.moves): it is
        if shown is None or shown.key != view.key:  # shown with no claim, or between claims
            st.session_state["label_notice"] = "No claim was on screen to skip: nothing was stored."
            return
        self.skip(view)

    def submit(self, label: str, view: ClaimView) -> None:
        """Button callback for the claim the button was drawn for (never "whatever is current").

        Runs before the rerun, so the next claim is drawn after the commit. Every press is
        stored and acknowledged, or answered with why not: a press whose claim this session no
        longer holds as current (a run that moved on was cut short by the next press, and the
        browser never showed its claim) is still a press on the claim its button showed."""
        shown = self.showing()
        if shown is None or shown.key != view.key:
            self.submit_elsewhere(label, view)
            return
        error_type = st.session_state.get("label_error_type")
        try:
            done = store_verdict(
                self.store,
                self.user.name,
                view,
                label,
                error_type if label in self.flagged else None,
                st.session_state.get("label_note", ""),
                min_dwell=self.state.min_dwell,
            )
        except StaleVerdictError as exc:
            st.session_state["label_stale"] = (view, label, exc.newer)
            return
        except AnnotateError as exc:
            st.session_state["label_error"] = str(exc)
            return
        self.state.stored(view, label, done)
        self.done_with(view)
        self.session["count"] += 1
        st.session_state["label_last"] = view
        self.fill_in(None)

    def submit_elsewhere(self, label: str, view: ClaimView) -> None:
        """A press for a claim other than the session's current one: stored if that claim is as
        its button showed it (no verdict of theirs since), else answered; never silent."""
        where = f"claim {view.claim_index + 1} of trace {view.trace_id}"
        latest = my_verdict(self.store, self.user.name, view)
        if latest is not None and latest["event_id"] != view.based_on:
            if latest["label"] == label:
                st.session_state["label_notice"] = f"Already stored: {label} on {where}."
            else:
                st.session_state["label_notice"] = (  # told, not asked: it is off screen
                    f"Not stored: that press ({label}) was for {where}, which you had labelled "
                    f"{latest['label']}. Use Back or Reopen to change it."
                )
            return
        try:
            done = store_verdict(self.store, self.user.name, view, label, None, "")
        except AnnotateError as exc:
            st.session_state["label_error"] = f"Nothing was stored for {where}: {exc}"
            return
        self.state.stored(view, label, done)
        self.session["count"] += 1
        st.session_state["label_notice"] = f"Stored {label} on {where}."

    def done_with(self, view: ClaimView) -> None:
        """Move on only if `view` is still the claim on screen (a late repeat changes nothing)."""
        st.session_state.pop("label_stale", None)
        shown = self.showing()
        if shown is not None and shown.key == view.key:
            st.session_state.pop(self.current, None)
            st.session_state.pop("label_back", None)
            st.session_state.pop("label_given", None)

    def keep_newer(self) -> None:
        view, _, _ = st.session_state["label_stale"]
        self.done_with(view)

    def change_to_mine(self) -> None:
        view, label, _ = st.session_state.pop("label_stale")
        self.submit(label, view_after_stale(self.store, self.user.name, view))

    def fill_in(self, given: dict | None) -> None:
        """The note and error type of the verdict given (Back, Reopen), or empty ones: the
        error type control shows the same empty state every time."""
        st.session_state["label_note"] = (given or {}).get("note") or ""
        st.session_state["label_error_type"] = (given or {}).get("error_type")

    def reopened(self, view: ClaimView | None) -> None:
        st.session_state.pop("label_stale", None)
        st.session_state["label_back"] = view
        given = my_verdict(self.store, self.user.name, view) if view is not None else None
        st.session_state["label_given"] = given
        self.fill_in(given)

    def back(self) -> None:
        self.reopened(previous_claim(self.store, self.user.name, self.sample))

    def reopen(self, trace_id: str, claim_index: int) -> None:
        try:
            self.reopened(reopen_claim(self.store, self.user.name, trace_id, claim_index))
        except AnnotateError as exc:
            st.session_state["label_error"] = str(exc)

    def ask(self, view: ClaimView) -> None:
        try:
            ask_question(
                self.store,
                self.user.name,
                view.trace_id,
                view.claim_index,
                st.session_state.get("label_question", ""),
                self.sample,
            )
        except AnnotateError as exc:
            st.session_state["label_error"] = str(exc)
            return
        st.session_state["label_question"] = ""
        st.session_state["label_asked"] = True

    def flag(self, view: ClaimView) -> None:
        flag_claim(
            self.store,
            view.trace_id,
            view.claim_index,
            self.user.name,
            st.session_state["label_flag_reason"],
        )
        st.session_state["label_flagged"] = True

    def skip(self, view: ClaimView) -> None:
        try:
            inserted = skip_claim(
                self.store,
                self.user.name,
                view,
                st.session_state.get("label_skip_reason", SKIP_REASONS[0]),
            )
        except AnnotateError as exc:
            st.session_state["label_error"] = str(exc)
            return
        self.state.skipped(view, inserted)
        self.done_with(view)
        self.fill_in(None)

    def stale_question(self) -> bool:
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
            ui.fmt("Keep {}", newer["label"]),
            key="label_stale_keep",
            on_click=ui.guard(self.keep_newer),
        )
        change.button(
            ui.fmt("Change it to {}", label),
            key="label_stale_change",
            on_click=ui.guard(self.change_to_mine),
        )
        return True

    def moves(self) -> None:
        """Back, Skip and its reason, and the toggles of the panels used now and then, above
        the claim's area and outside its fragment: a verdict reruns the fragment only, and
        these (seven elements that never change with the claim) are not sent again: a press
        brings 20 websocket messages where it brought 27 (docs/benchmarks.md). Their own
        clicks rerun the whole page. Skip is for the claim the browser shows (its token)."""
        # A horizontal container, not columns: one block where columns cost a block per column.
        row = st.container(horizontal=True, vertical_alignment="center", key="label_moves")
        with row:
            st.button(
                "Back",
                key="label_back_button",
                shortcut="b",
                help="change your last verdict",
                on_click=ui.guard(self.back),
            )
            chosen = st.session_state.get("label_skip_reason") or SKIP_REASONS[0]
            st.button(
                ui.fmt("Skip: {}", chosen.replace("_", " ")),
                key="label_skip_",  # one key for every claim: the claim is the one on screen
                shortcut="s",
                on_click=ui.guard(self.press_skip),
            )
            st.selectbox(
                "Skip reason", SKIP_REASONS, key="label_skip_reason", label_visibility="collapsed"
            )
            ui.panel_toggle("Badly extracted claim?", "label_flag_box")
            ui.panel_toggle("Ask the lead about this claim", "label_ask_box")
            ui.panel_toggle("Reopen a skipped claim or one of your last verdicts", "label_revisit")

    def controls(self, view: ClaimView, shown: str) -> None:
        """Error type and note; the badly extracted claim panel when its toggle is on."""
        # Horizontal containers, not columns: one block each where columns cost a block per
        # column, and every block is a message the browser renders on each press.
        fields = st.container(horizontal=True, key="label_fields")
        fields.selectbox(
            "Error type (unsupported labels)",
            ERROR_TYPES,
            index=None,
            placeholder="none",
            key="label_error_type",
        )
        fields.text_area(
            "Note (optional)",
            key="label_note",
            height=68,
            help="Keys here only type. Ctrl+Enter keeps the note and returns to the verdict keys.",
        )
        box = ui.opened("label_flag_box")
        if box is None:
            return
        with box:
            st.selectbox("What is wrong", FLAG_REASONS, key="label_flag_reason")
            st.button(
                "Flag for the lead",
                key=f"label_flag_{shown}",
                on_click=ui.guard(self.flag),
                args=(view,),
            )
            if st.session_state.pop("label_flagged", False):
                st.caption("Flagged. Label it as best you can, or skip it.")
