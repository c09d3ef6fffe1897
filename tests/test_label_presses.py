"""Every press on the Label page is stored and acknowledged, or answered with a message.

Under load a run that moved this session to the next claim could be cut short by the next
press before the browser showed that claim: the session's current claim was then not the one
on screen, and a press on the screen's claim did nothing and said nothing (9 of 2,000 presses
by 8 reviewers). The race is made here by moving the session's current claim on behind the
screen's back, in several sessions taking turns, and every press is counted.
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import button_for, plain, run_app
from labelling_data import prepare

from annotate.accounts.users import User
from annotate.labelling.assignment import assign
from annotate.labelling.session import claim_view, reviewer_queue, set_min_dwell
from annotate.store import open_store

REVIEWERS = ("alice", "bob", "carol", "dave")
PRESSES = 9
CURRENT = "label_current::demo"


@pytest.fixture
def press_store(tmp_path, monkeypatch):
    path = tmp_path / "presses.duckdb"
    store = open_store(path)
    prepare(store, tmp_path, REVIEWERS)
    assign(store, "demo", list(REVIEWERS), per_trace=2, seed=1)
    set_min_dwell(store, 0)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def stored_rows(path, query: str, reviewer: str) -> list[tuple]:
    store = open_store(path)
    try:
        return store.fetchall(query, [reviewer])
    finally:
        store.close()


def events(path, reviewer: str) -> list[tuple]:
    return stored_rows(
        path,
        "SELECT trace_id, claim_index, label FROM label_events WHERE reviewer = ? "
        "ORDER BY event_id",
        reviewer,
    )


def answered(app) -> list[str]:
    return [plain(e.value) for e in [*app.error, *app.info, *app.warning]]


def claim_on_screen(app) -> str:
    return next((h.proto.body for h in app.get("html") if "annotate-claim" in h.proto.body), "")


def press(app, path, reviewer: str, number: int, tally: Counter) -> None:
    """One press on the claim on screen; every third one after the session moved on behind
    the screen's back (the race)."""
    before, screen = len(events(path, reviewer)), claim_on_screen(app)
    if number % 3 == 2:  # a cut-short run moved the session on to the next claim unseen
        app.session_state[CURRENT] = upcoming(path, reviewer, app.session_state[CURRENT])
    label = "supported" if number % 4 else "contradicted"
    button_for(app, f"label_button_{label}_").click().run()
    assert not app.exception, app.exception
    stored = len(events(path, reviewer)) - before
    said = answered(app)
    moved = claim_on_screen(app) != screen
    tally["stored"] += stored
    tally["acknowledged"] += stored and (moved or bool(said))
    tally["answered"] += (not stored) and bool(said)
    tally["silent"] += (not stored) and not said  # another claim on screen answers nothing
    tally["presses"] += 1


def upcoming(path, reviewer: str, shown):
    """The claim after `shown` that the session would show next (none of its verdicts yet)."""
    store = open_store(path)
    try:
        for item in reviewer_queue(store, reviewer, "demo"):
            here = (item["trace_id"], item["claim_index"])
            if item["label"] is None and here != (shown.trace_id, shown.claim_index):
                return claim_view(store, *here)
    finally:
        store.close()
    raise AssertionError("the queue ran out")


def test_every_press_of_four_interleaved_reviewers_is_stored_or_answered(press_store):
    """Four browser sessions of one process (one store connection, a cursor each), their
    presses interleaved: AppTest runs one app at a time, so the sessions take turns."""
    apps = {name: run_app(User(name, "reviewer"), "pages/label.py") for name in REVIEWERS}
    tallies = {name: Counter() for name in REVIEWERS}
    for number in range(PRESSES):
        for name, app in apps.items():
            press(app, press_store, name, number, tallies[name])
    total = sum(tallies.values(), Counter())
    assert total["presses"] == PRESSES * len(REVIEWERS)
    assert total["silent"] == 0
    assert total["stored"] + total["answered"] == total["presses"]  # none lost
    assert total["acknowledged"] == total["stored"]
    for name in REVIEWERS:  # none duplicated: one event per claim, no claim twice
        stored = events(press_store, name)
        assert len(stored) == len({(t, c) for t, c, _ in stored}) == tallies[name]["stored"]


def test_a_press_made_while_the_previous_claim_was_on_screen_is_for_that_claim(press_store):
    """The verdict buttons keep their keys from claim to claim; which claim a press is for is
    the token the browser sends with it (the hidden field drawn after the claim). A press
    that reports the previous claim's token never labels the claim that replaced it."""
    app = run_app(User("alice", "reviewer"), "pages/label.py")
    first, token = claim_on_screen(app), app.text_input(key="label_shown").value
    button_for(app, "label_button_supported_").click().run()
    second = claim_on_screen(app)
    assert second != first and app.text_input(key="label_shown").value != token
    app.text_input(key="label_shown").set_value(token)  # the browser had not drawn it yet
    button_for(app, "label_button_contradicted_").click().run()
    assert [label for _, _, label in events(press_store, "alice")] == ["supported"]
    assert answered(app) == [
        f"Not stored: that press (contradicted) was for claim {first_claim(first)}, which you "
        "had labelled supported. Use Back or Reopen to change it."
    ]
    assert claim_on_screen(app) == second


def test_a_press_that_names_no_claim_stores_nothing_and_says_so(press_store):
    app = run_app(User("alice", "reviewer"), "pages/label.py")
    shown = claim_on_screen(app)
    app.text_input(key="label_shown").set_value("not a claim's token")
    button_for(app, "label_button_supported_").click().run()
    assert events(press_store, "alice") == []
    assert answered(app) == [
        "Nothing was stored for that press (supported): the page did not say which claim it "
        "showed. Press again."
    ]
    assert claim_on_screen(app) == shown


def first_claim(body: str) -> str:
    """'1 of trace t-1' from the claim box's data-claim ('t-1#0')."""
    trace, index = body.split('data-claim="', 1)[1].split('"', 1)[0].rsplit("#", 1)
    return f"{int(index) + 1} of trace {trace}"


def skips(path, reviewer: str) -> list[tuple]:
    return stored_rows(
        path,
        "SELECT trace_id, claim_index FROM skip_events WHERE reviewer = ? ORDER BY 1, 2",
        reviewer,
    )


def test_skip_is_for_the_claim_on_screen_and_never_for_one_already_passed(press_store):
    """Skip is drawn above the claim's area, outside its fragment (widgets.label.Desk.moves):
    a Skip made while the previous claim was still on screen skips nothing, and says so; a
    Skip on the claim shown skips it and shows the next."""
    app = run_app(User("alice", "reviewer"), "pages/label.py")
    first, token = claim_on_screen(app), app.text_input(key="label_shown").value
    button_for(app, "label_button_supported_").click().run()
    second = claim_on_screen(app)
    app.text_input(key="label_shown").set_value(token)  # the browser had not drawn it yet
    app.button(key="label_skip_").click().run()
    assert not app.exception, app.exception
    assert skips(press_store, "alice") == []
    assert answered(app) == ["No claim was on screen to skip: nothing was stored."]
    assert claim_on_screen(app) == second and second != first
    app.button(key="label_skip_").click().run()  # the token is the second claim's again
    assert len(skips(press_store, "alice")) == 1
    assert claim_on_screen(app) not in (first, second)
