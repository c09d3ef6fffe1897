"""The reviewer's desk between presses (annotate.labelling.desk_state): read once, kept while
the store's desk mark stands, read again when anything it holds may have moved; a verdict of
the session itself does not make it read again; blind like the session it serves."""

from __future__ import annotations

import pytest
from labelling_data import prepare

from annotate.claims.extraction import flag_claim
from annotate.labelling.assignment import assign
from annotate.labelling.desk_state import CHUNK, DeskState
from annotate.labelling.questions import answer_question, ask_question
from annotate.labelling.session import (
    next_claim,
    record_verdict,
    set_min_dwell,
    set_reveal_judge_after_submit,
    store_verdict,
)
from annotate.store.labels import blind_traces, desk_mark
from annotate.store.status import trace_detail


@pytest.fixture
def desk(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    state = DeskState("alice", "demo")
    state.refresh(fresh_store)
    return fresh_store, state


def press(store, state: DeskState, label: str = "supported"):
    view = state.next_view(store)
    state.stored(view, label, store_verdict(store, "alice", view, label))
    return view


def test_several_traces_read_at_once_are_each_what_trace_detail_gives_blind(desk):
    store, _ = desk
    ids = [row[0] for row in store.fetchall("SELECT trace_id FROM traces ORDER BY trace_id")]
    read = blind_traces(store, ids[:5])
    assert set(read) == set(ids[:5])
    for trace_id in ids[:5]:
        assert read[trace_id] == trace_detail(store, trace_id, judge=False)
        assert "judge_verdicts" not in read[trace_id]


def test_the_first_claim_reads_its_trace_with_the_next_ones_of_the_queue(desk):
    store, state = desk
    view = state.next_view(store)
    order = list(dict.fromkeys(item["trace_id"] for item in state.items))
    assert view.trace_id == order[0]
    assert set(state.traces) == set(order[: CHUNK + 1])  # the trace and the next CHUNK
    rule = next_claim(store, "alice", "demo")  # the same claim, trace and text as the session's
    assert (view.key, view.trace, view.position, view.total) == (
        rule.key,
        rule.trace,
        rule.position,
        rule.total,
    )


def test_own_verdicts_move_on_without_reading_the_desk_again(desk):
    store, state = desk
    first = press(store, state)
    assert state.refresh(store) is False  # its own event is counted, not read again
    second = state.next_view(store)
    assert (second.trace_id, second.claim_index) != (first.trace_id, first.claim_index)
    assert (second.trace_id, second.claim_index) == (
        next_claim(store, "alice", "demo").trace_id,
        next_claim(store, "alice", "demo").claim_index,
    )
    assert state.progress()["done"] == 1
    assert state.mark == desk_mark(store, "alice")


def test_a_verdict_from_another_tab_makes_the_desk_read_again(desk):
    store, state = desk
    elsewhere = next_claim(store, "alice", "demo")
    record_verdict(store, "alice", elsewhere, "contradicted")  # another tab of alice
    assert state.refresh(store) is True
    shown = state.next_view(store)
    assert (shown.trace_id, shown.claim_index) != (elsewhere.trace_id, elsewhere.claim_index)


def test_another_reviewers_verdict_leaves_the_desk_as_it_is(desk):
    store, state = desk
    record_verdict(store, "bob", next_claim(store, "bob", "demo"), "supported")
    assert state.refresh(store) is False


def test_a_setting_and_an_answer_reach_the_desk_at_the_next_draw(desk):
    store, state = desk
    view = state.next_view(store)
    asked = ask_question(store, "alice", view.trace_id, view.claim_index, "Is 5 days right?")
    assert state.refresh(store) is True
    assert [q["id"] for q in state.questions] == [asked]
    answer_question(store, asked, "Yes.", "lena")
    set_min_dwell(store, 1.5)
    assert state.refresh(store) is True
    assert state.questions[0]["answer"] == "Yes."
    assert state.min_dwell.total_seconds() == 1.5


def test_a_flagged_claim_keeps_the_judge_hidden_and_asks_nothing(desk):
    store, state = desk
    set_reveal_judge_after_submit(store, True)
    state.refresh(store)
    first = press(store, state)
    while (view := state.next_view(store)).trace_id == first.trace_id and view.claim_index < 2:
        press(store, state)
    last = state.next_view(store)
    assert last.trace_id == first.trace_id
    flag_claim(store, last.trace_id, last.claim_index, "alice", "not_atomic")
    assert state.judge_feedback(store, first) == []
    assert store.scalar("SELECT count(*) FROM judge_reveals") == 0
    state.refresh(store)
    press(store, state)
    shown = state.judge_feedback(store, first)
    assert ("response", "unsupported") in [(v["level"], v["label"]) for v in shown]
    assert store.scalar("SELECT count(*) FROM judge_reveals") == 1


def test_traces_ahead_are_read_in_the_background(desk):
    store, state = desk
    view = state.next_view(store)
    order = list(dict.fromkeys(item["trace_id"] for item in state.items))
    state.traces = {view.trace_id: state.traces[view.trace_id]}  # as if only this one held
    state.prepare(store, view)
    state._preparing.join(timeout=30)
    assert set(order[1 : 1 + CHUNK]) <= set(state.traces)
