"""The Label page's ratings of a whole response, after the reviewer's last claim of a trace:
each criterion of the rubric in turn, keys 1-5 (the levels' definitions as help), Skip for an
optional one. Blind: only the reviewer's own ratings are read; the judge waits until the
ratings are stored (a rating after seeing it would be refused)."""

from __future__ import annotations

import streamlit as st

import ui
from annotate.errors import AnnotateError
from annotate.ratings.record import asks_ratings, ratings_due, record_ratings, set_asks_ratings


def _rate(store, reviewer: str, trace_id: str, criterion: str, score: int | None) -> None:
    try:
        record_ratings(store, reviewer, trace_id, {criterion: score})
    except AnnotateError as exc:
        st.session_state["label_error"] = str(exc)


def ratings_now(store, user, last) -> list[dict]:
    """The criteria to rate now on the trace of `last` (the claim just labelled): [] if none."""
    return [] if last is None else ratings_due(store, user.name, last.trace_id)


def rating_step(store, user, last, due: list[dict]) -> None:
    """Show the next criterion of `due` (ratings_now) to rate on the trace of `last`."""
    criterion = due[0]
    st.subheader(ui.fmt("Rate the whole response: {}", criterion["name"].replace("_", " ")))
    st.caption(ui.fmt("Trace {} · {}", last.trace_id, criterion["question"]))
    st.text(last.trace.get("response") or "")
    trace, name = last.trace_id, criterion["name"]
    for level in criterion["levels"]:
        st.button(
            ui.fmt("{} · {}", level["score"], level["definition"]),
            key=f"label_rating_{name}_{level['score']}_{trace}",
            shortcut=str(level["score"]) if level["score"] in range(10) else None,
            on_click=ui.guard(_rate),
            args=(store, user.name, trace, name, level["score"]),
            width="stretch",
        )
    if criterion.get("optional"):
        st.button(
            "Skip this criterion",
            key=f"label_rating_{name}_skip_{trace}",
            on_click=ui.guard(_rate),
            args=(store, user.name, trace, name, None),
        )


def ask_ratings_toggle(store, on_change) -> None:
    """The Users page's setting: ask reviewers for ratings (the page's own `on_change` writes
    it, as its other settings)."""
    st.session_state["users_ask_ratings"] = asks_ratings(store)
    st.toggle(
        "Ask reviewers to rate each response on the rubric's criteria after its claims",
        key="users_ask_ratings",
        on_change=ui.guard(on_change),
        args=("users_ask_ratings", set_asks_ratings),
    )
