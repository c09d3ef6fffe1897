"""The Label page asks for the response's ratings after its last claim, before the judge."""

from __future__ import annotations

import pytest
from conftest import button_for, open_tab, plain, run_app
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


@pytest.fixture
def ratings_only_store(tmp_path, monkeypatch):
    """12 traces the judge `geval` rated, two reviewers rating relevance; no claim labels."""
    import json

    import numpy as np

    from annotate.accounts.users import add_user
    from annotate.ingest.importer import import_traces
    from annotate.ratings.record import record_ratings
    from annotate.sampling.allocation import SampleSpec
    from annotate.sampling.samples import draw_sample

    path = tmp_path / "ratings.duckdb"
    store = open_store(path)
    rng = np.random.default_rng(2)
    truth = rng.integers(1, 6, 12)
    rows = [
        {
            "trace_id": f"p-{i}",
            "feature": "billing" if i % 2 else "hr",
            "context": ["c"],
            "response": f"answer {i}",
            "judge": {"judge": "geval", "ratings": {"relevance": int(min(t + 1, 5))}},
        }
        for i, t in enumerate(truth)
    ]
    source = tmp_path / "p.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_traces(store, source)
    draw_sample(store, SampleSpec(name="demo", n=12, by=("feature",), seed=1))
    add_user(store, "lena", "lead", "correct horse battery")
    for name in ("ann", "bob"):
        add_user(store, name, "reviewer", "correct horse battery")
    assign(store, "demo", ["ann", "bob"], per_trace=2, seed=1)
    for name, shift in (("ann", 0), ("bob", 1)):
        for i, t in enumerate(truth):
            record_ratings(store, name, f"p-{i}", {"relevance": int(min(t + shift, 5))})
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


@pytest.mark.parametrize(
    ("page", "first"),
    [
        ("pages/agreement.py", "krippendorff_alpha_ordinal"),
        ("pages/calibration.py", "weighted_kappa_quadratic"),
        ("pages/rates.py", "overall"),
    ],
)
def test_each_statistics_page_shows_the_ratings(ratings_only_store, page, first):
    app = run_app(User("lena", "lead"), page)
    if page == "pages/rates.py":  # in the tab of the other figures (ui.lazy_tabs)
        open_tab(app, "rates_tab", "Errors and scores")
    assert "Ratings on a scale" in _subheaders(app)
    first_cells = [d.value.iloc[0, 0] for d in app.dataframe if len(d.value)]  # no frame keys
    assert first in first_cells
    # the claims' tables come first on each page; the ratings' is the last to start so
    frame = [d.value for d in app.dataframe if len(d.value) and d.value.iloc[0, 0] == first][-1]
    assert frame.iloc[0]["high"] > frame.iloc[0]["low"]  # an interval, not a bare number
