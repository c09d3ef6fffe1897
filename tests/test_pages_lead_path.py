"""The lead's path in the app (AppTest): claims from the Sample page, Assign refusing traces
without claims, the path and its next step, screens that follow the action, a flagged claim
fixed as a new version, and no command-line flag in what the app says."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURES, plain, run_app
from fake_anthropic import fake_anthropic, message  # noqa: F401 - the fixture
from labelling_data import prepare

import ui
from annotate.accounts.activity import activity
from annotate.accounts.users import User, add_user
from annotate.claims.extraction import flag_claim
from annotate.ingest.importer import import_traces
from annotate.ingest.inbox import set_import_folder
from annotate.labelling.assignment import assign
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from annotate.workflow.path import lead_path

LEAD = User("lena", "lead")
FLAG = re.compile(r"--[a-z]")


@pytest.fixture
def drawn_store(tmp_path, monkeypatch):
    """Three traces, the two judgeable ones (one with provided claims) drawn into `s`; two reviewers."""
    path = tmp_path / "app.duckdb"
    store = open_store(path)
    import_traces(store, FIXTURES / "generic" / "production.jsonl")
    set_import_folder(store, str(FIXTURES))
    draw_sample(store, SampleSpec(name="s", n=2, by=("feature",), seed=1))
    for name in ("alice", "bob"):
        add_user(store, name, "reviewer", "test passphrase")
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def texts(app) -> str:
    """Everything the page says, as one string."""
    parts = [e.value for kind in ("info", "warning", "success", "error", "caption", "markdown")
             for e in getattr(app, kind)]  # fmt: skip
    parts += [e.label for e in app.button] + [e.label for e in app.checkbox]
    return plain(" ".join(str(p) for p in parts))


def with_store(path, work):
    store = open_store(path)
    try:
        return work(store)
    finally:
        store.close()


def test_the_sample_page_makes_claims_for_traces_without_them(drawn_store):
    app = run_app(LEAD, "pages/sample.py")
    assert not app.exception, app.exception
    assert "1 trace of s without claims yet" in texts(app)
    app.button(key="sample_make_claims").click().run()
    assert not app.exception, app.exception
    said = texts(app)
    assert re.search(r"Made \d+ claims? for 1 trace \(sentences\)", said)
    assert "0 traces still without claims" in said
    assert "Every trace of s has its claims." in said
    assert "Next: Assign" in said
    claims = with_store(drawn_store, lambda s: s.fetchall(
        "SELECT trace_id, count(*) FROM claims GROUP BY ALL ORDER BY ALL"))  # fmt: skip
    assert [t for t, _ in claims] == ["t-1", "t-2"]
    acts = with_store(drawn_store, lambda s: activity(s, kind="claims"))
    assert [(a["actor"], a["origin"], a["subject"]) for a in acts] == [("lena", "app", "s")]


def test_with_a_key_the_sample_page_estimates_the_cost_then_extracts_with_the_llm(
    drawn_store,
    fake_anthropic,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANNOTATE_CLAIM_MODEL", "claude-haiku-4-5")
    answer = {"claims": [{"text": "Employees accrue 25 days of leave.", "quote": None}]}
    fake_anthropic.reply(200, message(json.dumps(answer)))
    app = run_app(LEAD, "pages/sample.py")
    app.radio(key="sample_claims_way").set_value("Extract with an LLM").run()
    said = texts(app)
    # one call (1 trace without claims) to the model at its price setting, before any call
    assert re.search(
        r"1 call to claude-haiku-4-5: about [\d,]+ input and [\d,]+ output tokens, about \$0\.0",
        said,
    )
    assert fake_anthropic.message_requests() == []
    app.button(key="sample_make_claims").click().run()
    assert not app.exception, app.exception
    assert "Made 1 claim for 1 trace (llm); 0 failed" in texts(app)
    assert len(fake_anthropic.message_requests()) == 1
    made = with_store(drawn_store, lambda s: s.fetchall(
        "SELECT text, origin FROM claims WHERE trace_id = 't-2'"))  # fmt: skip
    assert made == [("Employees accrue 25 days of leave.", "llm")]


def test_assign_refuses_while_sampled_traces_have_no_claims(drawn_store):
    app = run_app(LEAD, "pages/assign.py")
    assert "1 sampled trace without claims yet" in texts(app)
    assert app.button(key="assign_run").disabled
    app.multiselect(key="assign_reviewers").select("alice").select("bob").run()
    app.checkbox(key="assign_anyway").check().run()
    assert not app.button(key="assign_run").disabled
    app.button(key="assign_run").click().run()
    assert "Added" in texts(app)


def test_the_path_names_each_step_and_the_next_one(drawn_store):
    store = open_store(drawn_store)
    try:
        path = lead_path(store)
        assert [s.key for s in path.steps] == [
            "imported", "sampled", "claims", "assigned", "labelled",
            "adjudicated", "agreement", "calibration", "rates",
        ]  # fmt: skip
        assert path.next_step.key == "claims" and path.next_step.page == "sample"
        assert path.counts["without_claims"] == 1 and path.counts["sampled"] == 2
        assign(store, "s", ["alice", "bob"], per_trace=2, seed=0, assigned_by="lena")
        path = lead_path(store, "s")
        assert path.steps[3].done and [r["reviewer"] for r in path.reviewers] == ["alice", "bob"]
    finally:
        store.close()
    app = run_app(LEAD)
    said = texts(app)
    assert "Where the sample stands" in [plain(h.value) for h in app.subheader]
    assert "Next: Claims" in said and "have no claims yet" in said
    assert not FLAG.search(said)


def test_an_empty_store_says_what_to_do_first(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "empty.duckdb"))
    app = run_app(LEAD)
    said = texts(app)
    assert "Next: Import" in said and "import a trace file on the Import page" in said
    for page in ("pages/assign.py", "pages/adjudicate.py"):
        said = texts(run_app(LEAD, page))
        assert "Draw a sample first, on the Sample page." in said or "No samples yet" in said


def test_an_import_error_clears_the_last_report(drawn_store):
    app = run_app(LEAD, "pages/import_traces.py")
    app.text_input(key="import_path").input("generic/production.jsonl")
    app.button(key="import_run").click().run()
    assert "duplicates 3" in texts(app)
    app.text_input(key="import_path").input("no/such/file.jsonl")
    app.button(key="import_run").click().run()
    assert "is not a file in the import folder" in plain(app.error[0].value)
    assert "duplicates 3" not in texts(app) and not app.metric  # the old report is gone
    assert not app.get("progress")  # no bar left at "reading…"


def test_a_sample_error_is_in_the_apps_words(drawn_store):
    app = run_app(LEAD, "pages/sample.py")
    app.text_input(key="sample_name").input("too-big")
    app.number_input(key="sample_n").set_value(50)
    app.button[0].click().run()
    said = plain(app.error[0].value)
    assert "lower the number of traces or widen the filters" in said and not FLAG.search(said)
    app.text_input(key="sample_name").input("s")
    app.number_input(key="sample_n").set_value(2)
    app.button[0].click().run()
    if not app.error:  # the plan shows; the name is checked when drawing
        app.button(key="sample_draw").click().run()
    said = plain(app.error[0].value)
    assert "pick another name, or top up that sample" in said and not FLAG.search(said)


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("lower --n or widen the filters", "lower the number of traces or widen the filters"),
        ("give the sample a --name", "give the sample a name"),
        ("unknown --source-format 'x'", "unknown source format 'x'"),
        ("e.g. `annotate judge-labels --judge j --set a=b`, or", "e.g. the command line, or"),
        ("a-- b --", "a-- b --"),  # no flag: left alone
    ],
)
def test_app_text_names_no_flag(message, shown):
    assert ui.app_text(message) == shown


def test_the_lead_splits_a_flagged_claim_in_the_app(tmp_path, monkeypatch):
    path = tmp_path / "l.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    assign(store, "demo", ["alice", "bob"], per_trace=2, seed=0, assigned_by="lena")
    flag_claim(store, "lt-000", 0, "alice", "not_atomic")
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    app = run_app(LEAD, "pages/adjudicate.py")
    assert "1 flagged claims, 1 still to fix" in [plain(e.label) for e in app.expander]
    app.text_area(key="adjudicate_fix_split").input(
        "Invoice INV-1000 was issued\nThe invoice date is 2026-02-01."
    )
    app.button[-1].click().run()  # the fix form's "Save as a new version"
    assert not app.exception, app.exception
    said = texts(app)
    assert "claims 1 of lt-000 replaced by 4, 5" in said
    assert "1 flagged claims, 0 still to fix" in [plain(e.label) for e in app.expander]
    queued = with_store(path, lambda s: s.fetchall(
        "SELECT DISTINCT a.reviewer FROM assignments a JOIN claims c USING (trace_id) "
        "WHERE c.trace_id = 'lt-000' AND c.claim_index = 3 ORDER BY 1"))  # fmt: skip
    assert queued == [("alice",), ("bob",)]
