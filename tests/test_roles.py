"""Each role sees exactly its pages; a reviewer sees no judge and no other reviewer.

The seeded judge label, score, explanation and the other reviewer's note are unique
strings, searched for in everything a reviewer's pages render (text, HTML, tables).
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, button_for, run_app, sign_in_token
from labelling_data import PASSWORD, write_labelling_traces
from streamlit.testing.v1 import AppTest

from annotate.accounts.users import User, add_user
from annotate.agreement.calibration import load_thresholds
from annotate.ingest.importer import import_traces
from annotate.labelling.assignment import assign
from annotate.labelling.session import (
    claim_view,
    next_claim,
    record_verdict,
    set_min_dwell,
    set_reveal_judge_after_submit,
)
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store

PAGES = {
    "home": "pages/home.py",
    "label": "pages/label.py",
    "import": "pages/import_traces.py",
    "sample": "pages/sample.py",
    "assign": "pages/assign.py",
    "adjudicate": "pages/adjudicate.py",
    "agreement": "pages/agreement.py",
    "calibration": "pages/calibration.py",
    "rates": "pages/rates.py",
    "rubric": "pages/rubric.py",
    "canary": "pages/canary.py",
    "activity": "pages/activity.py",
    "users": "pages/users.py",
    "questions": "pages/questions.py",
}
ROLE_PAGES = {
    "lead": set(PAGES),
    "reviewer": {"home", "label"},
    "auditor": {"home", "agreement", "calibration", "rubric", "rates", "canary", "activity"},
}
USERS = {"lead": User("lena", "lead"), "reviewer": User("alice", "reviewer")}
USERS["auditor"] = User("audrey", "auditor")
JUDGE_LABEL = "judge-said-QX7-unsupported"
JUDGE_EXPLANATION = "JUDGE-EXPLANATION-ZK4: the invoice date is wrong"
JUDGE_NAME = "secret-judge-JN9"
OTHER_NOTE = "BOB-NOTE-PL2 he thinks so"


@pytest.fixture
def seeded(tmp_path, monkeypatch):
    path = tmp_path / "roles.duckdb"
    store = open_store(path)
    traces = write_labelling_traces(tmp_path / "traces.jsonl")
    rows = [json.loads(line) for line in traces.read_text().splitlines()]
    for row in rows:  # the judge's words are unique strings, to be searched for
        row["judge"] = [
            {
                "judge": JUDGE_NAME,
                "level": "claim",
                "claim": 1,
                "label": JUDGE_LABEL,
                "score": 0.123456,
                "explanation": JUDGE_EXPLANATION,
            }
        ]
    traces.write_text("".join(json.dumps(row) + "\n" for row in rows))
    import_traces(store, traces)
    draw_sample(store, SampleSpec(name="demo", n=12, by=("feature",), seed=1))
    for name, role in (("lena", "lead"), ("alice", "reviewer"), ("bob", "reviewer")):
        add_user(store, name, role, PASSWORD)
    add_user(store, "audrey", "auditor", PASSWORD)
    assign(store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    set_min_dwell(store, 0)
    for t in range(12):  # bob labels every first claim, with a note alice must not see
        view = claim_view(store, f"lt-{t:03d}", 0)
        record_verdict(store, "bob", view, "supported", None, OTHER_NOTE)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def rendered(app: AppTest) -> str:
    """Everything the page drew: every element's message (text, labels, options, HTML) and
    every table cell."""
    parts = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(app._tree)
    parts += [frame.value.to_string() for frame in app.dataframe]
    # Markdown escapes (ui.md) and the message format add backslashes; the secrets have none.
    return "\n".join(parts).replace("\\", "")


@pytest.mark.parametrize("role", sorted(ROLE_PAGES))
@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_role_reaches_exactly_its_pages(seeded, role, page):
    app = run_app(USERS[role])
    if page in ROLE_PAGES[role]:
        app.switch_page(PAGES[page]).run()
        assert not app.exception, app.exception
        assert app.title, f"{page} drew nothing for a {role}"
    else:
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            app.switch_page(PAGES[page])


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_page_run_directly_refuses_a_wrong_role_and_a_visitor(seeded, page):
    """Streamlit can run a pages/ file without app.py (before the first st.navigation)."""
    for user in (None, USERS["reviewer"], USERS["auditor"]):
        app = AppTest.from_file(str(ROOT / PAGES[page]), default_timeout=60)
        if user is not None:
            app.session_state["auth_token"] = sign_in_token(user)
        app.run()
        assert not app.exception, app.exception
        allowed = user is not None and page in ROLE_PAGES[user.role]
        if user is None:
            assert [s.value for s in app.subheader] == ["Sign in"]
        elif not allowed:
            assert [e.value for e in app.error] == ["This page is not available to your role."]
        if not allowed:
            text = rendered(app)
            for secret in ("lt-000", "demo", JUDGE_LABEL, OTHER_NOTE, "Invoice INV"):
                assert secret not in text, (page, user, secret)


@pytest.mark.parametrize("reveal", [False, True])
def test_a_reviewer_never_sees_the_judge_or_another_reviewer_before_their_verdict(seeded, reveal):
    store = open_store(seeded)
    set_reveal_judge_after_submit(store, reveal)
    store.close()
    secrets = (JUDGE_LABEL, JUDGE_EXPLANATION, JUDGE_NAME, "0.123456", OTHER_NOTE)
    app = run_app(USERS["reviewer"])  # Home: the reviewer's queue only
    home = rendered(app)
    assert "Your queue" in home and "Browse a trace" not in home
    assert not [s for s in secrets if s in home]
    app.switch_page(PAGES["label"]).run()
    seen_after = []
    for _ in range(36):
        page = rendered(app)
        shown = next_claim_index(seeded)
        if shown is None:
            break
        assert not [s for s in secrets if s in page.split("Judge on this trace")[0]]
        button_for(app, "label_button_contradicted_").click().run()
        assert not app.exception, app.exception
        seen_after.append(JUDGE_LABEL in rendered(app))
    # With the setting on, the judge shows only after alice's own verdict on that claim.
    assert any(seen_after) is reveal
    assert OTHER_NOTE not in rendered(app)


def next_claim_index(path):
    store = open_store(path)
    try:
        view = next_claim(store, "alice", "demo")
        return None if view is None else (view.trace_id, view.claim_index)
    finally:
        store.close()


def test_an_auditor_changes_no_setting_and_reports_carry_the_saved_thresholds(seeded):
    store = open_store(seeded)
    before = store.fetchall("SELECT key, value FROM settings ORDER BY key")
    saved = load_thresholds(store)
    store.close()
    app = run_app(USERS["auditor"], PAGES["calibration"])
    for box in app.number_input:
        box.set_value(-1.0).run()
    for box in app.checkbox:
        box.check().run()
    assert not [b for b in app.button if "save" in (b.key or "")]
    store = open_store(seeded)
    try:
        assert store.fetchall("SELECT key, value FROM settings ORDER BY key") == before
        assert load_thresholds(store) == saved
    finally:
        store.close()


def test_import_of_a_file_is_recorded_with_the_signed_in_lead(seeded, tmp_path):
    store = open_store(seeded)  # the page's import is in test_pages.py; here the library route
    try:
        extra = tmp_path / "more.jsonl"
        extra.write_text(json.dumps({"trace_id": "n-1", "response": "r", "context": ["c"]}) + "\n")
        report = import_traces(store, extra, actor="lena")
        by = store.scalar("SELECT created_by FROM imports WHERE id = ?", [report.import_id])
        assert by == "lena"
    finally:
        store.close()


def test_a_lead_sets_the_shared_units_minimum_on_the_page_and_an_auditor_cannot(seeded):
    from annotate.accounts.activity import activity
    from annotate.agreement.reliability import load_min_shared

    store = open_store(seeded)
    for t in range(12):  # alice labels what bob labelled: units with two reviewers
        record_verdict(store, "alice", claim_view(store, f"lt-{t:03d}", 0), "contradicted")
    store.close()
    auditor = run_app(USERS["auditor"], PAGES["agreement"])
    assert not [n for n in auditor.number_input if n.key == "agreement_min_shared"]
    lead = run_app(USERS["lead"], PAGES["agreement"])
    lead.number_input(key="agreement_min_shared").set_value(5).run()
    assert not lead.exception, lead.exception
    store = open_store(seeded)
    try:
        assert load_min_shared(store) == 5
        acts = activity(store, actor="lena", kind="setting")
        assert [a["detail"]["value"] for a in acts] == [5]
    finally:
        store.close()
