"""The Label page asks for the response's ratings after its last claim, before the judge."""

from __future__ import annotations

import pytest
from conftest import button_for, plain, run_app
from labelling_data import prepare

from annotate.accounts.users import User
from annotate.labelling.assignment import assign
from annotate.labelling.session import set_min_dwell, set_reveal_judge_after_submit
from annotate.ratings.record import set_asks_ratings
from annotate.store import open_store


@pytest.fixture
def rating_store(tmp_path, monkeypatch):
    path = tmp_path / "rate.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    assign(store, "demo", ["alice"], per_trace=1, seed=1)
    set_min_dwell(store, 0)
    set_asks_ratings(store, True, "lena")
    set_reveal_judge_after_submit(store, True, "lena")
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def _subheaders(app) -> list[str]:
    return [plain(s.value) for s in app.subheader]


def test_ratings_follow_the_claims_of_a_trace_and_precede_the_judge(rating_store):
    app = run_app(User("alice", "reviewer"), "pages/label.py")
    for _ in range(3):  # the three claims of the first trace
        assert not any(s.startswith("Rate the whole response") for s in _subheaders(app))
        button_for(app, "label_button_supported_").click().run()
    assert "Rate the whole response: relevance" in _subheaders(app)
    captions = [plain(c.value) for c in app.caption]
    assert not any(c.startswith("Judge on this trace") for c in captions)  # blind until rated
    assert not [b for b in app.button if b.key and b.key.startswith("label_button_")]
    button_for(app, "label_rating_relevance_4_").click().run()
    assert "Rate the whole response: coherence" in _subheaders(app)
    button_for(app, "label_rating_coherence_5_").click().run()
    assert not app.exception, app.exception
    assert not any(s.startswith("Rate the whole response") for s in _subheaders(app))
    captions = [plain(c.value) for c in app.caption]
    assert any(c.startswith("Judge on this trace") for c in captions)  # now, and only now
    store = open_store(rating_store)
    try:
        rows = store.fetchall(
            "SELECT criterion, score, reviewer FROM rating_events ORDER BY event_id"
        )
        assert rows == [("relevance", 4, "alice"), ("coherence", 5, "alice")]
    finally:
        store.close()
