"""AppTest flows: first lead, login, access by role, labelling with buttons, Back, Skip, adjudication."""

from __future__ import annotations

import pytest
from conftest import ROOT, button_for, open_panel, plain, run_app, sign_in_token
from labelling_data import PASSWORD, prepare
from streamlit.testing.v1 import AppTest

from annotate.accounts.users import User, session_user
from annotate.labelling.assignment import assign
from annotate.labelling.session import set_min_dwell
from annotate.store import open_store

APP = str(ROOT / "app.py")


@pytest.fixture
def labelling_store(tmp_path, monkeypatch):
    path = tmp_path / "label.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    assign(store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    set_min_dwell(store, 0)  # these flows click at machine speed; the dwell has its own tests
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


app_as = run_app


def test_first_lead_is_created_on_a_store_without_accounts(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "new.duckdb"))
    app = app_as(None)
    assert "Create the first lead" in [s.value for s in app.subheader]
    app.text_input(key="login_name").input("lena")
    app.text_input(key="login_password").input(PASSWORD)
    app.text_input(key="login_repeat").input(PASSWORD)
    app.button[0].click().run()
    assert not app.exception, app.exception
    assert "Create the first lead" not in [s.value for s in app.subheader]
    # AppTest resets Streamlit's pages-folder mode on every run, so this rerun ran the
    # page file itself (its own guard let the new lead in); app.py runs in a fresh session.
    again = AppTest.from_file(APP, default_timeout=60)
    again.session_state["auth_token"] = app.session_state["auth_token"]
    again.run()
    assert "Signed in as **lena** (lead)" in [plain(c.value) for c in again.sidebar.caption]


def test_login_and_logout(labelling_store):
    app = app_as(None)
    assert "Sign in" in [s.value for s in app.subheader]
    app.text_input(key="login_name").input("alice")
    app.text_input(key="login_password").input("wrong password")
    app.button[0].click().run()
    assert "wrong user name or password" in plain(app.error[0].value)
    app.text_input(key="login_password").input(PASSWORD)
    app.button[0].click().run()
    token = app.session_state["auth_token"]
    store = open_store(labelling_store)
    try:
        assert session_user(store, token) == User("alice", "reviewer")
        app = AppTest.from_file(APP, default_timeout=60)  # app.py, with its Log out button
        app.session_state["auth_token"] = token
        app.run()
        app.button(key="app_logout").click().run()
        assert "auth_token" not in app.session_state
        assert session_user(store, token) is None  # the token is revoked, not only forgotten
    finally:
        store.close()
    assert "Sign in" in [s.value for s in app.subheader]


@pytest.mark.parametrize(
    "page",
    [
        "pages/users.py",
        "pages/assign.py",
        "pages/adjudicate.py",
        "pages/import_traces.py",
        "pages/sample.py",
    ],
)
def test_lead_pages_are_not_registered_for_a_reviewer(labelling_store, page):
    app = app_as(User("alice", "reviewer"))
    with pytest.raises(ValueError, match="Could not find a navigation page") as caught:
        app.switch_page(page)
    assert "Known pages: ['/work/main/pages/home.py', '/work/main/pages/label.py']".replace(
        "/work/main", str(ROOT)
    ) in str(caught.value)


def test_an_auditor_has_only_the_read_only_pages(labelling_store):
    app = app_as(User("audrey", "auditor"))
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        app.switch_page("pages/label.py")
    app.switch_page("pages/calibration.py").run()
    assert not app.exception, app.exception
    assert "Calibration of the judge" in [t.value for t in app.title]
    app.switch_page("pages/agreement.py").run()
    assert "Agreement between reviewers" in [t.value for t in app.title]


def test_a_page_refuses_a_role_even_if_reached(labelling_store):
    """Defence in depth: run a lead page's script directly with a reviewer in session."""
    app = AppTest.from_file(str(ROOT / "pages" / "users.py"), default_timeout=60)
    app.session_state["auth_token"] = sign_in_token(User("alice", "reviewer"))
    app.run()
    assert "This page is not available to your role." in [e.value for e in app.error]
    assert not app.dataframe


def _claim_element(app: AppTest) -> str:
    """The claim's element: the progress line, the claim box and its details line."""
    return next(h.proto.body for h in app.get("html") if "annotate-claim" in h.proto.body)


def _claim_text(app: AppTest) -> str:
    """The claim's box and details, without the progress line above it."""
    element = _claim_element(app)
    return element[element.index('<div class="annotate-claim-head"') :]


def test_a_reviewer_labels_five_claims_goes_back_skips_and_sees_progress(labelling_store):
    app = app_as(User("alice", "reviewer"), "pages/label.py")
    assert "0 / 36 claims done" in _claim_element(app)
    shown = []
    for label in ["supported", "contradicted", "supported", "not_in_context", "supported"]:
        shown.append(_claim_text(app))
        button_for(app, f"label_button_{label}_").click().run()
        assert not app.exception, app.exception
    assert len(set(shown)) >= 3
    assert "5 / 36 claims done" in _claim_element(app)
    app.button(key="label_back_button").click().run()
    assert "Changing your last verdict" in app.warning[0].value
    assert _claim_text(app) == shown[-1]
    button_for(app, "label_button_contradicted_").click().run()
    button_for(app, "label_skip_").click().run()
    assert "6 / 36 claims done" in _claim_element(app)  # 5 labelled (one twice) + 1 skipped
    store = open_store(labelling_store)
    try:
        labels = store.fetchall(
            "SELECT label FROM label_events WHERE reviewer = 'alice' ORDER BY event_id"
        )
        assert [row[0] for row in labels] == [
            "supported",
            "contradicted",
            "supported",
            "not_in_context",
            "supported",
            "contradicted",
        ]
        assert store.scalar("SELECT count(*) FROM skip_events WHERE reviewer = 'alice'") == 1
    finally:
        store.close()


def test_trace_text_is_escaped_in_the_label_view(tmp_path, monkeypatch):
    path = tmp_path / "xss.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    store.execute(
        "UPDATE contexts SET text = '<script>alert(1)</script> <img src=x onerror=alert(2)>' WHERE position = 1"
    )
    assign(store, "demo", ["alice"], per_trace=1, seed=1)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    app = app_as(User("alice", "reviewer"), "pages/label.py")
    from widgets.label_panels import KEYS_SCRIPT  # our own script: the keys, no data in it

    bodies = " ".join(h.proto.body for h in app.get("html") if h.proto.body != KEYS_SCRIPT)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in bodies and "<script>" not in bodies
    assert "&lt;img src=x onerror=alert(2)&gt;" in bodies


def test_the_lead_adjudicates_a_disagreement(labelling_store):
    for reviewer, label in (("alice", "supported"), ("bob", "contradicted")):
        app = app_as(User(reviewer, "reviewer"), "pages/label.py")
        # both label their whole queue's first trace the same way, in their own order
        for _ in range(36):
            button_for(app, f"label_button_{label}_").click().run()
    app = app_as(User("lena", "lead"), "pages/adjudicate.py")
    assert "36 claims where reviewers disagree" in [plain(c.value) for c in app.caption]
    app.selectbox(key="adjudicate_label").select("contradicted")
    app.text_area(key="adjudicate_reason").input("the context gives another amount")
    app.button[-1].click().run()
    assert (
        plain(app.success[0].value)
        == "Recorded contradicted for lt-000 · claim 1. The original votes stay."
    )
    # the list follows the action: the resolved claim left "Only unresolved"
    assert "35 claims where reviewers disagree" in [plain(c.value) for c in app.caption]
    assert app.text_area(key="adjudicate_reason").value == ""  # emptied once stored
    # The second submit of a double click on the claim just decided comes with the cleared
    # form (or the same one): it stores nothing and shows no error.
    app.toggle(key="adjudicate_open_only").set_value(False).run()
    app.selectbox(key="adjudicate_claim").select("lt-000 · claim 1").run()
    app.button[-1].click().run()
    app.selectbox(key="adjudicate_label").select("contradicted")
    app.text_area(key="adjudicate_reason").input("the context gives another amount")
    app.button[-1].click().run()
    assert not app.error, [e.value for e in app.error]
    store = open_store(labelling_store)
    try:
        assert store.scalar("SELECT count(*) FROM adjudications") == 1
        assert store.scalar("SELECT count(*) FROM label_events") == 72
    finally:
        store.close()


def test_the_lead_assigns_the_demo_sample_to_themselves_in_one_click(tmp_path, monkeypatch):
    path = tmp_path / "demo.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    app = app_as(User("lena", "lead"), "pages/assign.py")
    app.button(key="assign_demo_me").click().run()
    assert not app.exception, app.exception
    store = open_store(path)
    try:
        assert store.scalar("SELECT count(*) FROM assignments WHERE reviewer = 'lena'") == 12
    finally:
        store.close()


def test_the_panels_used_now_and_then_are_drawn_only_while_open(labelling_store):
    """Catches the reopen, ask and flag panels drawn (and their lists read) on every verdict:
    on a labelling page they were a third of the browser's work per key press
    (tests/bench/bench_label_latency.py). Closed, their widgets are absent; opened, present."""
    app = app_as(User("alice", "reviewer"), "pages/label.py")
    keys = ("label_reopen_pick", "label_question", "label_flag_reason")
    drawn = {w.key for w in app.selectbox} | {w.key for w in app.text_area}
    assert not drawn & set(keys)
    panels = {"Reopen a skipped claim or one of your last verdicts", "Badly extracted claim?"}
    assert panels <= {plain(t.label) for t in app.toggle}
    assert not panels & {plain(e.label) for e in app.expander}  # ~15 ms of chromium a press
    for panel in ("label_revisit", "label_ask_box", "label_flag_box"):
        open_panel(app, panel)
    assert app.text_area(key="label_question") is not None
    assert app.selectbox(key="label_flag_reason") is not None
    assert "Nothing to reopen yet" in " ".join(c.value for c in app.caption)
    button_for(app, "label_skip_").click().run()
    assert app.selectbox(key="label_reopen_pick").options[0].startswith("skipped (")


def test_a_reviewer_flags_a_badly_extracted_claim_and_the_lead_sees_it(labelling_store):
    app = app_as(User("alice", "reviewer"), "pages/label.py")
    open_panel(app, "label_flag_box")
    app.selectbox(key="label_flag_reason").select("not_atomic")
    button_for(app, "label_flag_").click().run()
    assert not app.exception, app.exception
    lead = app_as(User("lena", "lead"), "pages/adjudicate.py")
    # no disagreements yet, so the page stops after the flags
    assert "1 flagged claims, 1 still to fix" in [plain(e.label) for e in lead.expander]


def test_the_calibration_page_shows_agreement_and_the_judge_confusion(labelling_store):
    from annotate.labelling.session import claim_view, record_verdict

    store = open_store(labelling_store)
    for t in range(12):
        for reviewer in ("alice", "bob"):
            record_verdict(
                store,
                reviewer,
                claim_view(store, f"lt-{t:03d}", 1),
                "contradicted" if t < 6 else "supported",
            )
    store.close()
    app = app_as(User("lena", "lead"), "pages/agreement.py")
    assert any(
        c.value.startswith("12 claims labelled by two or more reviewers") for c in app.caption
    )
    app.switch_page("pages/calibration.py").run()
    assert not app.exception, app.exception
    judge = app.dataframe[0].value  # the judge table is the first on the page
    values = dict(zip(judge["statistic"], judge["value"], strict=True))
    assert values["sensitivity"] == 1.0 and values["specificity"] == 0.0
