"""The Rates page under AppTest: an auditor reads every tab and downloads, changes nothing and
cannot reach a lead's pages; a lead saves the threshold; a tab runs only when opened."""

from __future__ import annotations

import pytest
from conftest import open_tab, run_app
from rates_data import make_store

from annotate.accounts.activity import activity
from annotate.accounts.users import User
from annotate.rates.gate import load_threshold, save_threshold
from annotate.store import open_store
from widgets.ahead import WINDOWS

AUDITOR, LEAD = User("audrey", "auditor"), User("lena", "lead")


TABS = "rates_tab"


def budget_table(app):
    return next(d.value for d in app.dataframe if "more with the judge" in d.value.columns)


def exports_tab(app):
    return open_tab(app, TABS, "Threshold and exports")


@pytest.fixture
def rates_store(tmp_path, monkeypatch):
    path = make_store(tmp_path, {"billing_qa": 0.3, "hr_policy": 0.1})
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def test_an_auditor_sees_rates_trend_and_downloads_and_changes_nothing(rates_store):
    app = run_app(AUDITOR, "pages/rates.py")
    assert [t.value for t in app.title] == ["Hallucination rates"]
    table = app.dataframe[0].value
    assert set(table["estimator"]) == {
        "weighted_human",
        "judge_raw",
        "judge_corrected",
        "rogan_gladen",
    }
    assert {"overall", "feature=billing_qa", "feature=hr_policy"} <= set(table["slice"])
    assert not app.subheader  # the other tabs' sections are not drawn until opened
    open_tab(app, TABS, "Trend")
    assert app.selectbox(key="rates_window").value == WINDOWS[0] and app.get("vega_lite_chart")
    assert [s.value for s in open_tab(app, TABS, "Errors and scores").subheader][:2] == [
        "Error types (claims whose gold is unsupported, weighted)",
        "The judge's scores",
    ]
    open_tab(app, TABS, "Label budget")
    assert len(budget_table(app)) == 2  # a row per stratum
    exports_tab(app)
    assert not [b for b in app.button if b.key == "rates_threshold_save"]
    assert not [n for n in app.number_input if n.key == "rates_threshold"]
    store = open_store(rates_store)
    settings_before = store.fetchall("SELECT key, value FROM settings ORDER BY key")
    store.close()
    app.button(key="rates_prepare").click().run()
    assert not app.exception, app.exception
    names = {b.proto.label for b in app.button if b.key.startswith("rates_download_")}
    assert {
        "Download rates\\.csv",
        "Download bundle\\.zip",
        "Download evaluations\\.jsonl",
    } <= names
    store = open_store(rates_store)
    try:
        exports = activity(store, actor="audrey", kind="export")
        assert {e["subject"] for e in exports} == {
            "rates.csv",
            "rates.parquet",
            "rates.json",
            "evaluations.jsonl",
            "bundle.zip",
        }
        assert store.fetchall("SELECT key, value FROM settings ORDER BY key") == settings_before
    finally:
        store.close()
    fresh = run_app(AUDITOR)
    for lead_page in ("pages/sample.py", "pages/users.py", "pages/import_traces.py"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            fresh.switch_page(lead_page)


def test_a_lead_saves_the_rate_threshold_and_the_states_follow_it(rates_store):
    app = exports_tab(run_app(LEAD, "pages/rates.py"))
    app.number_input(key="rates_threshold").set_value(0.5).run()
    app.button(key="rates_threshold_save").click().run()
    assert not app.exception, app.exception
    store = open_store(rates_store)
    try:
        assert load_threshold(store) == 0.5
        assert [a["detail"]["value"] for a in activity(store, actor="lena", kind="setting")] == [
            0.5
        ]
    finally:
        store.close()
    states = set(open_tab(app, TABS, "Rates").dataframe[0].value["state"])
    assert "breach" not in states


def test_a_lead_tops_up_the_sample_to_the_label_budget_and_an_auditor_cannot(rates_store):
    auditor = open_tab(run_app(AUDITOR, "pages/rates.py"), TABS, "Label budget")
    assert len(budget_table(auditor))  # the plan, not its button
    assert not [b for b in auditor.button if b.key == "rates_top_up"]
    app = open_tab(run_app(LEAD, "pages/rates.py"), TABS, "Label budget")
    app.number_input(key="rates_budget_width").set_value(0.05).run()
    app.button(key="rates_top_up").click().run()
    assert not app.exception, app.exception
    store = open_store(rates_store)
    try:
        acts = activity(store, actor="lena", kind="top_up")
        assert len(acts) == 1 and acts[0]["detail"]["added"] > 0
    finally:
        store.close()


def test_a_revisit_reads_the_rates_until_the_store_changes(rates_store, monkeypatch):
    """Catches a page that reads the frame and computes every rate on each visit and widget
    change (at a million traces, seconds each time)."""
    import annotate.rates.view as view

    reads: list[str] = []

    def counted(store, sample, by, judge=None, draws=None):
        reads.append(sample)
        return load_inputs(store, sample, by, judge, draws)

    from annotate.rates.inputs import load_inputs

    monkeypatch.setattr(view, "load_inputs", counted)
    first = run_app(AUDITOR, "pages/rates.py")
    open_tab(first, TABS, "Trend")
    assert len(reads) == 1  # one read for the rates and the trend
    again = open_tab(run_app(AUDITOR, "pages/rates.py"), TABS, "Label budget")
    again.number_input(key="rates_budget_width").set_value(0.2).run()
    rates = open_tab(first, TABS, "Rates").dataframe[0].value
    assert len(reads) == 1 and open_tab(again, TABS, "Rates").dataframe[0].value.equals(rates)
    store = open_store(rates_store)
    save_threshold(store, 0.4, "lena")
    store.close()
    run_app(AUDITOR, "pages/rates.py")
    assert len(reads) == 2


def test_the_label_budget_is_planned_once_per_width_until_the_store_changes(
    rates_store, monkeypatch
):
    """Catches a page that plans the label budget on every run (most of a revisit's CPU on a
    300,000-trace store); the plan shown is the library's for the page's inputs."""
    import annotate.rates.view as view
    from annotate.rates.budget import plan_labels
    from annotate.rates.inputs import load_inputs

    widths: list[float] = []

    def counted(inputs, width):
        widths.append(width)
        return plan_labels(inputs, width)

    monkeypatch.setattr(view, "plan_labels", counted)
    first = run_app(LEAD, "pages/rates.py")
    assert widths == []  # not planned before its tab is opened
    open_tab(first, TABS, "Label budget")
    open_tab(run_app(LEAD, "pages/rates.py"), TABS, "Label budget")  # another session
    assert widths == [0.1]
    first.number_input(key="rates_budget_width").set_value(0.05).run()
    assert widths == [0.1, 0.05]
    shown = budget_table(first)
    store = open_store(rates_store)
    try:
        plan = plan_labels(load_inputs(store, "main", ["feature"]), 0.05)
        save_threshold(store, 0.4, "lena")
    finally:
        store.close()
    assert list(shown["more with the judge"]) == [s["with_judge"]["more"] for s in plan["strata"]]
    open_tab(run_app(LEAD, "pages/rates.py"), TABS, "Label budget")
    assert widths == [0.1, 0.05, 0.1]


def test_the_judge_chosen_first_is_the_one_with_verdicts_on_the_sample(rates_store, tmp_path):
    """Catches the alphabetically first judge as the default (a one-off import's judge that
    judged none of the sample left judge_raw, judge_corrected and Rogan-Gladen empty)."""
    import json

    from rates_data import JUDGE

    from annotate.ingest.importer import import_traces

    stray = tmp_path / "stray.jsonl"
    verdicts = [{"judge": f"a-{n}", "level": "response", "label": "supported"} for n in range(3)]
    rows = [{"trace_id": f"stray-{n}", "response": "r", "context": ["c"], "judge": verdicts}
            for n in range(3)]  # fmt: skip
    stray.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = open_store(rates_store)
    try:
        import_traces(store, stray)  # each a-N judge: 3 verdicts, none on the sample
    finally:
        store.close()
    app = run_app(AUDITOR, "pages/rates.py")
    assert not app.exception, app.exception
    assert app.selectbox(key="rates_judge").value == JUDGE
    table = app.dataframe[0].value
    raw = table[(table["estimator"] == "judge_raw") & (table["slice"] == "overall")]
    assert raw["rate"].notna().all() and len(raw) == 1


def test_prepared_files_go_when_the_level_changes(rates_store):
    """Catches rates.csv of the response level offered after the page moved to the claim
    level: the files were kept against the row count, the same at both levels."""
    app = exports_tab(run_app(AUDITOR, "pages/rates.py"))
    app.button(key="rates_prepare").click().run()
    assert len([b for b in app.button if b.key.startswith("rates_download_")]) == 5
    app.selectbox(key="rates_level").select("claim").run()
    assert not app.exception, app.exception
    assert len([b for b in app.button if b.key.startswith("rates_download_")]) == 0
    app.button(key="rates_prepare").click().run()  # prepared again, for the claim level
    assert len([b for b in app.button if b.key.startswith("rates_download_")]) == 5
