"""Every page loads under AppTest, and the Import page imports through its widgets."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, ROOT, plain, run_app
from streamlit.testing.v1 import AppTest

from annotate.accounts.users import User
from annotate.ingest.importer import import_traces
from annotate.ingest.inbox import set_import_folder
from annotate.store import open_store

APP = str(ROOT / "app.py")
LEAD = User("lena", "lead")


@pytest.fixture
def app_store(tmp_path, monkeypatch):
    path = tmp_path / "app.duckdb"
    store = open_store(path)
    import_traces(store, FIXTURES / "generic" / "production.jsonl")
    set_import_folder(store, str(FIXTURES))
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def run_page(page: str | None = None, user: User | None = LEAD) -> AppTest:
    """Run the app as `user` (logged in through session state; the login form has its own tests)."""
    return run_app(user, page)


def test_home_shows_the_store_at_a_glance(app_store):
    app = run_page()
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Traces"] == "3"
    assert metrics["Judgeable"] == "2"
    assert metrics["With claims"] == "33%"
    assert metrics["With judge verdicts"] == "33%"


def test_home_shows_a_chosen_trace_as_text(app_store):
    app = run_page()
    app.selectbox(key="home_trace").select("t-1").run()
    texts = [t.value for t in app.text]
    assert (
        "Invoice INV-2291 was issued on 2026-02-03. Duplicate charges are refunded within 5 business days."
        in texts
    )
    assert "Duplicate charges are refunded within 5 business days." in texts


def test_home_on_an_empty_store_says_how_to_fill_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "empty.duckdb"))
    app = run_page()
    assert "The store is empty" in app.info[0].value


def test_import_page_imports_a_path_and_lists_rejected_rows(app_store):
    app = run_page("pages/import_traces.py")
    app.text_input(key="import_path").input("bad/wrong_types.jsonl")
    app.button(key="import_run").click().run()
    assert not app.exception, app.exception
    assert "imported 1, rejected 4" in plain(app.warning[0].value)
    errors = app.dataframe[-1].value
    assert list(errors["line"]) == [2, 3, 3, 4, 4, 5]
    assert errors["field"].iloc[0] == "context"


def test_import_page_reports_a_missing_file(app_store):
    app = run_page("pages/import_traces.py")
    app.text_input(key="import_path").input("no/such/file.jsonl")
    app.button(key="import_run").click().run()
    assert "is not a file in the import folder" in plain(app.error[0].value)


@pytest.mark.parametrize("path", ["/etc/passwd", "../../pyproject.toml", "/etc/../etc/hostname"])
def test_import_page_refuses_a_path_outside_the_import_folder(app_store, path):
    app = run_page("pages/import_traces.py")
    app.text_input(key="import_path").input(path)
    app.button(key="import_run").click().run()
    assert "is outside the import folder" in plain(app.error[0].value)
    store = open_store(app_store)
    try:
        assert store.scalar("SELECT count(*) FROM imports") == 1  # only the fixture's import
    finally:
        store.close()


def test_sample_page_plans_and_draws_a_sample(app_store):
    app = run_page("pages/sample.py")
    app.text_input(key="sample_name").input("page-sample")
    app.number_input(key="sample_n").set_value(2)
    app.button[0].click().run()  # the form's "Show the plan"
    assert not app.exception, app.exception
    assert "Plan: 2 of 2 traces" in [plain(h.value) for h in app.subheader]
    plan = app.dataframe[0].value
    assert list(plan["N_h"]) == [1, 1] and list(plan["n_h"]) == [1, 1]
    app.button(key="sample_draw").click().run()
    assert not app.exception, app.exception
    assert plain(app.success[0].value) == (
        "Drew 2 traces into page-sample (seed 7). Next: make their claims below."
    )
    assert not [b for b in app.button if b.key == "sample_draw"]  # the plan and Draw are gone
    assert "Plan: 2 of 2 traces" not in [plain(h.value) for h in app.subheader]
    listed = app.dataframe[0].value  # the plan table is gone: the first is the list
    assert list(listed["name"]) == ["page-sample"] and list(listed["traces"]) == [2]


def test_a_second_draw_picks_its_sample_for_claims_without_a_widget_warning(app_store, monkeypatch):
    from streamlit.elements.lib import policies

    warned: list[str] = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # once per process
    monkeypatch.setattr(policies._LOGGER, "warning", lambda text, *args, **_: warned.append(text))
    app = run_page("pages/sample.py")
    for name in ("first", "second"):
        app.text_input(key="sample_name").input(name)
        app.number_input(key="sample_n").set_value(2)
        app.button[0].click().run()
        app.button(key="sample_draw").click().run()
        assert not app.exception, app.exception
        # Streamlit logs a warning when a widget has both a default and a session-state value
        assert not warned, warned
        assert app.selectbox(key="sample_claims_sample").value == name
    app.selectbox(key="sample_claims_sample").select("first").run()
    app.button(key="sample_topup").click().run()  # any rerun keeps the lead's pick
    assert app.selectbox(key="sample_claims_sample").value == "first"


def test_sample_page_shows_a_bad_request_as_an_error(app_store):
    app = run_page("pages/sample.py")
    app.text_input(key="sample_name").input("too-big")
    app.number_input(key="sample_n").set_value(50)
    app.button[0].click().run()
    assert "n=50 is larger than the frame" in plain(app.error[0].value)


@pytest.mark.parametrize(
    "page",
    [
        "pages/home.py",
        "pages/label.py",
        "pages/import_traces.py",
        "pages/sample.py",
        "pages/assign.py",
        "pages/adjudicate.py",
        "pages/agreement.py",
        "pages/calibration.py",
        "pages/canary.py",
        "pages/users.py",
    ],
)
def test_every_page_loads_for_a_lead(app_store, page):
    app = run_page(page)
    assert not app.exception
    assert app.title, f"{page} rendered no title"


def test_the_import_folder_setting_refuses_a_bad_name_and_can_go_back_to_the_default(
    fresh_store, tmp_path, monkeypatch
):
    """Catches a name too long for the system escaping as a traceback on the Users page, and
    a lead who moved the folder unable to set the default back while data/inbox is missing."""
    from annotate.errors import UsageError
    from annotate.ingest import inbox

    monkeypatch.chdir(tmp_path)  # the default folder, data/inbox, is made here
    with pytest.raises(UsageError, match=r"cannot be a folder on the server \(File name too"):
        inbox.set_import_folder(fresh_store, "x" * 5000)
    with pytest.raises(UsageError, match="is not a folder on the server; create it first"):
        inbox.set_import_folder(fresh_store, str(tmp_path / "missing"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert inbox.set_import_folder(fresh_store, str(elsewhere)) == elsewhere.resolve()
    assert inbox.set_import_folder(fresh_store, "data/inbox") == (tmp_path / "data/inbox").resolve()
    assert inbox.import_folder(fresh_store) == (tmp_path / "data/inbox").resolve()

    wide = tmp_path / "data/inbox"
    for name in ("a.jsonl", "b.jsonl", ".hidden.jsonl", "c.jsonl", "d.jsonl"):
        (wide / name).write_text("{}\n")
    assert inbox.inbox_files(fresh_store) == ["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"]
    monkeypatch.setattr(inbox, "SCAN_LIMIT", 3)  # a folder as wide as / is looked at in part
    assert len(inbox.inbox_files(fresh_store)) <= 3


def test_the_users_form_keeps_its_values_until_its_act_is_done(app_store):
    """The fields are emptied by the callback once the account is added, not by the browser on
    submit (clear_on_submit): Streamlit merges a double Enter's two submits while the first
    waits, the newer values winning, and the browser had already emptied them: the account was
    never added (a flaky CI run of the lead's path). A refused add keeps what was typed."""
    app = run_page("pages/users.py")
    app.text_input(key="users_name").input("keeps")
    app.text_input(key="users_password").input("short")
    next(b for b in app.button if b.label == "Add user").click().run()
    assert app.error and app.text_input(key="users_name").value == "keeps"
    app.text_input(key="users_password").input("a long passphrase")
    next(b for b in app.button if b.label == "Add user").click().run()
    assert [plain(s.value) for s in app.success] == ["Added keeps (reviewer)."]
    assert app.text_input(key="users_name").value == ""
    assert app.text_input(key="users_password").value == ""


def test_a_second_add_that_still_carries_the_values_keeps_the_first_answer(app_store):
    """Caught (a flaky CI run of the lead's path): under load a double Enter's second submit
    left the browser before the first one's rerun cleared the form; it carried the same name
    and password (or some of them), failed with "exists", and that error replaced "Added ...".
    The same values again at once, or some of them, are that second press: the account is
    added once and the answer stays."""
    from annotate.accounts.activity import activity
    from annotate.accounts.users import AuthError, authenticate

    app = run_page("pages/users.py")
    for _ in range(2):
        app.text_input(key="users_name").input("twice")
        app.text_input(key="users_password").input("a long passphrase")
        next(b for b in app.button if b.label == "Add user").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert [plain(s.value) for s in app.success] == ["Added twice (reviewer)."]
    app.text_input(key="users_name").input("")  # the name cleared, the password not yet
    app.text_input(key="users_password").input("a long passphrase")
    next(b for b in app.button if b.label == "Add user").click().run()
    assert not app.error and [plain(s.value) for s in app.success] == ["Added twice (reviewer)."]
    app.text_input(key="users_name").input("twice")
    app.text_input(key="users_password").input("another passphrase")  # not the same press
    next(b for b in app.button if b.label == "Add user").click().run()
    assert "exists" in " ".join(plain(e.value) for e in app.error)
    for _ in range(2):  # the password form's second press, its values still there
        app.selectbox(key="users_password_target").select("twice")
        app.text_input(key="users_new").input("a third passphrase")
        next(b for b in app.button if b.label == "Set the password").click().run()
    assert "twice has a new password; their sessions have ended." in [
        plain(s.value) for s in app.success
    ]
    other = next(o for o in app.selectbox(key="users_password_target").options if o != "twice")
    app.selectbox(key="users_password_target").select(other)  # the Account reset, not the rest
    app.text_input(key="users_new").input("a third passphrase")
    next(b for b in app.button if b.label == "Set the password").click().run()
    store = open_store(app_store)
    try:
        acts = [a for a in activity(store, kind="account") if a["subject"] == "twice"]
        assert len(acts) == 2  # added once, its password set once
        with pytest.raises(AuthError):  # the reset Account's password was not set
            authenticate(store, other, "a third passphrase")
    finally:
        store.close()


def test_a_double_click_on_the_users_forms_does_the_act_once_and_says_so(app_store):
    """Catches the second click of a double click (it arrives with the cleared form)
    answered with "the user name must be ..." after the user was added, and a password
    double click ending in "at least 8 characters" with the password unchanged."""
    from annotate.accounts.activity import activity
    from annotate.accounts.users import authenticate

    app = run_page("pages/users.py")
    app.text_input(key="users_name").input("dbl")
    app.text_input(key="users_password").input("a long passphrase")
    add = next(b for b in app.button if b.label == "Add user")
    add.click().run()
    next(b for b in app.button if b.label == "Add user").click().run()  # the cleared form
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert [plain(s.value) for s in app.success] == ["Added dbl (reviewer)."]
    app.selectbox(key="users_password_target").select("dbl")
    app.text_input(key="users_new").input("another passphrase")
    next(b for b in app.button if b.label == "Set the password").click().run()
    next(b for b in app.button if b.label == "Set the password").click().run()
    assert not app.error, [e.value for e in app.error]
    assert "dbl has a new password; their sessions have ended." in [
        plain(s.value) for s in app.success
    ]
    store = open_store(app_store)
    try:
        assert authenticate(store, "dbl", "another passphrase").name == "dbl"
        acts = [a for a in activity(store, kind="account") if a["subject"] == "dbl"]
        assert len(acts) == 2  # added once, its password set once
    finally:
        store.close()


def test_a_lead_writes_a_setting_only_by_changing_it_never_by_a_stale_page(app_store):
    """Catches (browser QA) the Users page writing every setting whose widget differed from
    the store on any rerun: lead1's page, drawn before lead2 turned the judge reveal on and
    set 24-hour sessions, wrote False and 12 back when lead1 only picked another account."""
    from annotate.accounts.activity import activity
    from annotate.accounts.users import session_hours
    from annotate.labelling.session import reveal_judge_after_submit

    first = run_page("pages/users.py", User("lena", "lead"))
    second = run_page("pages/users.py", User("liam", "lead"))
    second.toggle(key="users_reveal_judge").set_value(True).run()
    second.number_input(key="users_session_hours").set_value(24.0).run()
    assert not second.exception and not second.error
    first.run()  # an unrelated rerun of the page drawn before those changes
    assert first.toggle(key="users_reveal_judge").value is True  # shows the stored values
    assert first.number_input(key="users_session_hours").value == 24.0
    store = open_store(app_store)
    try:
        assert reveal_judge_after_submit(store) and session_hours(store) == 24.0
        settings = [
            (a["actor"], a["subject"])
            for a in activity(store, kind="setting")
            if a["subject"] != "import_folder"  # the fixture sets the folder
        ]
        assert sorted(settings) == [
            ("liam", "reveal_judge_after_submit"),
            ("liam", "session_hours"),
        ]
    finally:
        store.close()
    first.toggle(key="users_reveal_judge").set_value(False).run()  # a change of its own
    store = open_store(app_store)
    try:
        assert not reveal_judge_after_submit(store)
    finally:
        store.close()
