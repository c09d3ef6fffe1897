"""The lead pages' default views computed ahead (widgets/ahead.py) and the pages' shared cache
(ui.Results): a page opened after the worker computes none of its statistics again; a session
asking for a value being computed waits for it; the worker runs for leads and auditors only,
once per change of the store, and stops when the store changes under it."""

from __future__ import annotations

import threading

import pytest
from conftest import ROOT, open_tab, sign_in_token
from rates_data import make_store
from streamlit.testing.v1 import AppTest

import ui
from annotate.accounts.users import User
from annotate.rates.gate import save_threshold
from annotate.store import open_store
from widgets import ahead

LEAD, AUDITOR, REVIEWER = User("lena", "lead"), User("aude", "auditor"), User("rita", "reviewer")
# each page's statistics: seconds of bootstrap on a large store, what the worker is for
HEAVY = {
    "agreement": {"annotate.agreement.reliability.agreement"},
    "calibration": {
        "annotate.agreement.calibration.calibration",
        "annotate.judge.labels.mapping_rows",
        "annotate.labelling.session.claim_view",
    },
    "rates": {
        "annotate.rates.view.rates_view",
        "annotate.rates.view.trend_view",
        "annotate.rates.view.budget_view",
        "annotate.rates.view.scores_view",
    },
}
# each page's tabs (ui.lazy_tabs: only the open one runs): (key, names)
TABS = {
    "agreement": None,
    "calibration": ("calibration_tab", ("The judge", "Per slice", "As a rater", "Disagreements",
                                        "Settings and report")),
    "rates": ("rates_tab", ("Rates", "Trend", "Errors and scores", "Label budget",
                            "Threshold and exports")),
}  # fmt: skip


@pytest.fixture
def lead_store(tmp_path, monkeypatch):
    """Two reviewers' labels on a sample with judge verdicts: every lead page has numbers."""
    path = make_store(tmp_path, {"billing_qa": 0.3, "hr_policy": 0.1}, sample_n=40)
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    monkeypatch.setenv("ANNOTATE_COMPUTE_AHEAD", "1")
    ui.RESULTS.clear()
    ui.CHARTS.clear()
    return path


def open_home(user: User | str) -> AppTest:
    """Home as `user` (signed in now), or with the token of a session already signed in."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.session_state["auth_token"] = user if isinstance(user, str) else sign_in_token(user)
    app.run()
    assert not app.exception, app.exception
    return app


def join_worker() -> None:
    for thread in threading.enumerate():
        if thread.name == "annotate-ahead":
            thread.join(120)
            assert not thread.is_alive()


@pytest.mark.parametrize("page", sorted(HEAVY))
def test_a_page_opened_after_a_leads_home_computes_none_of_its_statistics(
    lead_store, monkeypatch, page
):
    started = ahead._STATE["started"]
    app = open_home(LEAD)
    join_worker()
    assert ahead._STATE["started"] == started + 1
    assert HEAVY[page] <= set(ui.RESULTS.computed)  # the worker computed them
    assert ui.CHARTS.computed  # and drew their charts' specs
    ui.RESULTS.computed.clear()
    ui.CHARTS.computed.clear()
    monkeypatch.setenv("ANNOTATE_COMPUTE_AHEAD", "0")  # the page starts no second worker
    app.switch_page(f"pages/{page}.py").run()
    assert not app.exception, app.exception
    drawn = len(app.dataframe)
    if TABS[page]:  # every tab, each drawn as a click would open it
        key, names = TABS[page]
        for name in names:
            drawn += len(open_tab(app, key, name).dataframe)
    assert drawn >= 4  # the page drew its numbers
    assert not set(ui.RESULTS.computed) & HEAVY[page], ui.RESULTS.computed
    assert not ui.CHARTS.computed, ui.CHARTS.computed  # every chart it drew was made ahead


def test_without_the_worker_the_page_computes_its_statistics(lead_store, monkeypatch):
    monkeypatch.setenv("ANNOTATE_COMPUTE_AHEAD", "0")
    app = open_home(LEAD)
    join_worker()
    assert not set(ui.RESULTS.computed) & HEAVY["rates"]
    app.switch_page("pages/rates.py").run()
    assert not app.exception, app.exception
    assert set(ui.RESULTS.computed) & HEAVY["rates"] == {"annotate.rates.view.rates_view"}
    key, names = TABS["rates"]
    for name in names:  # the trend and the budget when their tabs open
        open_tab(app, key, name)
    assert HEAVY["rates"] <= set(ui.RESULTS.computed)


def test_a_lead_page_computes_the_others_ahead_and_not_itself(lead_store):
    app = open_home(AUDITOR)  # Home computes all three: the next change of the store is new
    join_worker()
    save_threshold_as_lead(lead_store)
    ui.RESULTS.computed.clear()
    app.switch_page("pages/calibration.py").run()
    assert not app.exception, app.exception
    join_worker()
    computed = ui.RESULTS.computed
    assert computed.count("annotate.agreement.calibration.calibration") == 1  # the page's own
    assert HEAVY["agreement"] | HEAVY["rates"] <= set(computed)  # the worker's


def save_threshold_as_lead(path) -> None:
    store = open_store(path)
    try:
        save_threshold(store, 0.2, actor="lena")
    finally:
        store.close()


def test_the_worker_runs_for_leads_and_auditors_once_per_change_of_the_store(lead_store):
    lead, auditor = sign_in_token(LEAD), sign_in_token(AUDITOR)  # a sign-in is an act
    started = ahead._STATE["started"]
    open_home(REVIEWER)
    assert ahead._STATE["started"] == started  # a reviewer's visit never starts it
    open_home(lead)
    join_worker()
    open_home(auditor)  # the same change of the store: already computed
    join_worker()
    assert ahead._STATE["started"] == started + 1
    save_threshold_as_lead(lead_store)
    open_home(auditor)
    join_worker()
    assert ahead._STATE["started"] == started + 2


def test_the_worker_stops_when_the_store_changes_under_it(lead_store, monkeypatch):
    def change(ask, store):
        save_threshold(store, 0.3, actor="lena")

    monkeypatch.setattr(ahead, "PAGES", {"first": change, **ahead.PAGES})
    store = open_store(lead_store)
    try:
        done = ahead.compute_ahead(store)
    finally:
        store.close()
    assert done == ["first"]
    assert not ui.RESULTS.computed


def test_a_second_asker_waits_for_the_first_computation_and_gets_its_own_copy():
    results = ui.Results(entries=2)
    key = results.key("db", (1,), sorted, ([3, 1, 2],), {})
    release, inside, calls, got = threading.Event(), threading.Event(), [], {}

    def slow():
        calls.append(1)
        inside.set()
        assert release.wait(30)
        return {"rows": [1, 2, 3]}

    def ask(name):
        got[name] = results.get_or_compute(key, slow)

    first = threading.Thread(target=ask, args=("first",))
    first.start()
    assert inside.wait(30)
    second = threading.Thread(target=ask, args=("second",))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting on the first's computation, not computing its own
    release.set()
    first.join(30)
    second.join(30)
    assert calls == [1]
    assert got["first"] == got["second"] == {"rows": [1, 2, 3]}
    got["first"]["rows"].append(4)  # a reader changing its copy changes nobody else's
    assert results.get_or_compute(key, slow) == {"rows": [1, 2, 3]}
    assert calls == [1]


def test_errors_are_raised_to_each_asker_and_never_kept():
    results = ui.Results()
    key = results.key("db", (1,), len, (), {})

    def failing():
        raise ValueError("no")

    for _ in range(2):
        with pytest.raises(ValueError):
            results.get_or_compute(key, failing)
    assert results.get_or_compute(key, lambda: 7) == 7


def test_the_least_recently_used_value_is_dropped_first():
    results = ui.Results(entries=2)
    a, b, c = (results.key("db", (1,), len, (n,), {}) for n in "abc")
    results.get_or_compute(a, lambda: "a")
    results.get_or_compute(b, lambda: "b")
    results.get_or_compute(a, lambda: "never")  # a read: `a` is now the most recent
    results.get_or_compute(c, lambda: "c")
    assert results.has(a) and results.has(c) and not results.has(b)


@pytest.mark.parametrize(
    ("user", "worker", "starts"),
    [(LEAD, False, True), (AUDITOR, False, True), (REVIEWER, False, False), (LEAD, True, False)],
)
def test_the_statistics_imports_start_after_any_page_of_a_lead_never_a_reviewers(
    monkeypatch, user, worker, starts
):
    """app.py ends every page with warm_up.after_page: a lead who opens Users (or an auditor
    Activity) before Rates finds altair and the statistics imported; a first visit to Rates that
    no other page preceded spent 0.3-0.4 s importing them. A reviewer's Label needs none of
    them; while the lead pages' worker runs, it imports them itself."""
    from widgets import warm_up

    imported = []
    monkeypatch.setattr(warm_up, "_STARTED", threading.Event())
    monkeypatch.setattr(warm_up, "_import_all", lambda: imported.append(user.role))
    monkeypatch.setitem(ahead._STATE, "running", worker)
    for _ in range(2):  # once per process
        warm_up.after_page(user)
        for thread in threading.enumerate():
            if thread.name == "annotate-warm-up":
                thread.join(60)
    assert imported == ([user.role] if starts else [])
    assert "warm_up.after_page(user)" in (ROOT / "app.py").read_text()  # every page's last act


def test_the_warm_up_imports_what_the_statistics_pages_import():
    """Each name the warm-up imports exists (a renamed module would be skipped silently)."""
    import importlib

    from widgets import warm_up

    for name in warm_up.HEAVY:
        importlib.import_module(name)
