"""Blind for the whole trace (annotate.labelling.blind): the judge shows only once every claim
of the trace is labelled (a flag is no label), and after it the reviewer's labels on the trace
are final for gold: Back shows them read-only, a change is refused, and gold never reads a
label event stored after the reveal."""

from __future__ import annotations

import pytest
from conftest import button_for, plain, run_app
from labelling_data import prepare

from annotate.accounts.users import User
from annotate.claims.extraction import flag_claim
from annotate.labelling.adjudication import gold_labels
from annotate.labelling.assignment import assign
from annotate.labelling.blind import JudgeSeenError, is_final
from annotate.labelling.session import (
    claim_view,
    judge_feedback,
    next_claim,
    previous_claim,
    record_verdict,
    set_min_dwell,
    set_reveal_judge_after_submit,
)
from annotate.store import open_store
from annotate.store.assignments import insert_label_event


@pytest.fixture
def ready(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice"], per_trace=1, seed=1)
    set_reveal_judge_after_submit(fresh_store, True)
    return fresh_store


def _label_trace(store, labels: list[str]):
    """Label the next claims of the first trace in alice's queue; returns their views."""
    views = []
    for label in labels:
        view = next_claim(store, "alice", "demo")
        record_verdict(store, "alice", view, label)
        views.append(view)
    return views


def test_a_flagged_claim_does_not_reveal_the_judge(ready):
    first, second = _label_trace(ready, ["supported", "supported"])
    third = next_claim(ready, "alice", "demo")
    assert third.trace_id == first.trace_id
    flag_claim(ready, third.trace_id, third.claim_index, "alice", "not_atomic")
    assert judge_feedback(ready, "alice", second) == []  # claim 3 is flagged, not labelled
    assert not is_final(ready, "alice", first.trace_id)
    record_verdict(ready, "alice", next_claim(ready, "alice", "demo"), "supported")
    assert ("response", "unsupported") in [
        (v["level"], v["label"]) for v in judge_feedback(ready, "alice", second)
    ]


def test_no_judge_verdict_shows_while_a_claim_of_the_trace_is_unlabelled(ready):
    """The fixture's judge has a claim verdict on the second claim: it waits for the third."""
    _, second = _label_trace(ready, ["supported", "supported"])
    assert judge_feedback(ready, "alice", second) == []


def test_after_the_reveal_back_is_read_only_and_a_change_is_refused(ready):
    views = _label_trace(ready, ["supported", "supported", "supported"])
    assert judge_feedback(ready, "alice", views[-1])  # seen: the trace's labels are final
    back = previous_claim(ready, "alice", "demo")
    assert back.final and (back.trace_id, back.claim_index) == (views[-1].trace_id, 2)
    with pytest.raises(JudgeSeenError, match="final: you have seen the judge's verdict"):
        record_verdict(ready, "alice", back, "contradicted")
    events = ready.scalar("SELECT count(*) FROM label_events WHERE reviewer = 'alice'")
    assert events == 3
    assert gold_labels(ready, "demo")[(back.trace_id, 2)] == "supported"


def test_gold_never_reads_a_label_event_stored_after_the_reveal(ready):
    """Whatever route stores an event after the reveal (an older tab, a race), gold and
    agreement keep the label given blind."""
    views = _label_trace(ready, ["supported", "supported", "supported"])
    judge_feedback(ready, "alice", views[1])
    row = {"trace_id": views[1].trace_id, "claim_index": 1, "reviewer": "alice"}
    insert_label_event(ready, {**row, "label": "contradicted", "rubric_version": 1})
    assert gold_labels(ready, "demo")[(views[1].trace_id, 1)] == "supported"


def test_without_the_reveal_setting_back_still_changes_a_label(ready):
    set_reveal_judge_after_submit(ready, False)
    views = _label_trace(ready, ["supported", "supported", "supported"])
    assert judge_feedback(ready, "alice", views[-1]) == []
    back = previous_claim(ready, "alice", "demo")
    assert not back.final
    record_verdict(ready, "alice", back, "contradicted")
    assert gold_labels(ready, "demo")[(back.trace_id, 2)] == "contradicted"


@pytest.fixture
def reveal_store(tmp_path, monkeypatch):
    path = tmp_path / "reveal.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    assign(store, "demo", ["alice"], per_trace=1, seed=1)
    set_min_dwell(store, 0)
    set_reveal_judge_after_submit(store, True)
    first = next_claim(store, "alice", "demo")
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path, first.trace_id


def test_the_page_flags_without_revealing_and_back_shows_the_seen_verdict_read_only(
    reveal_store,
):
    path, trace = reveal_store
    app = run_app(User("alice", "reviewer"), "pages/label.py")
    for _ in range(2):
        button_for(app, "label_button_supported_").click().run()
    app.session_state["label_flag_box"] = True
    app.run()
    button_for(app, "label_flag_").click().run()  # claim 3: flagged, still unlabelled
    shown = " ".join(plain(c.value) for c in app.caption)
    assert "Judge on this trace" not in shown
    button_for(app, "label_button_supported_").click().run()  # claim 3 labelled: trace done
    assert "Judge on this trace (response): unsupported" in " ".join(
        plain(c.value) for c in app.caption
    )
    app.button(key="label_back_button").click().run()
    assert "is final: you have seen the judge's verdict" in plain(app.info[0].value)
    assert all(b.disabled for b in app.button if b.key.startswith("label_button_"))
    store = open_store(path)
    try:
        assert gold_labels(store, "demo")[(trace, 2)] == "supported"
        assert is_final(store, "alice", trace) and claim_view(store, trace, 2)
    finally:
        store.close()
