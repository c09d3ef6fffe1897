"""AppTest: the Agreement and Calibration pages on the bundled sample data (`annotate init`).
Calibration's tabs run only when opened (ui.lazy_tabs): a test opens the tab it reads."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import open_tab, run_app

from annotate.accounts.activity import activity
from annotate.accounts.users import User
from annotate.agreement.calibration import load_thresholds, save_thresholds
from annotate.agreement.reliability import NOMINAL_STATS, STATISTICS
from annotate.store import open_store

LEAD, AUDITOR = User("lena", "lead"), User("audrey", "auditor")
TABS = "calibration_tab"


def tab(app, name: str):
    return open_tab(app, TABS, name)


@pytest.fixture(scope="module")
def sample_store(bundled_store: Path) -> Path:
    """The store `make run` makes: sample traces, the demo sample, simulated reviewers' labels."""
    return bundled_store


@pytest.fixture
def store_copy(sample_store, tmp_path, monkeypatch) -> Path:
    path = tmp_path / "annotate.duckdb"
    shutil.copy(sample_store, path)
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def table_with(app, column: str, value: str):
    """The first dataframe on the page whose `column` holds `value` (AppTest has no frame keys)."""
    for element in app.dataframe:
        frame = element.value
        if column in frame.columns and value in set(frame[column]):
            return frame
    raise AssertionError(f"no table with {value!r} in column {column!r}")


def test_agreement_page_shows_statistics_flags_and_the_time_chart(store_copy):
    app = run_app(LEAD, "pages/agreement.py")
    captions = [c.value for c in app.caption]
    assert any("claims labelled by two or more reviewers" in c for c in captions)
    table = table_with(app, "statistic", "gwet_ac1")
    assert list(table["statistic"]) == list(STATISTICS)
    nominal = table[table["statistic"].isin(NOMINAL_STATS)]
    assert nominal["value"].notna().all() and (nominal["low"] <= nominal["value"]).all()
    scores = table[~table["statistic"].isin(NOMINAL_STATS)]
    assert scores["value"].isna().all()  # undefined on labels, and says why
    assert scores["note"].str.contains("needs numeric ratings").all()
    pairs = table_with(app, "pair", "sim-ana / sim-ben")
    assert len(pairs[pairs["statistic"] == "cohen_kappa"]) == 3  # three simulated reviewers
    warnings = [unescaped(w.value) for w in app.warning]
    assert any(w.startswith("sim-cho: labels much faster") for w in warnings)
    assert not any(w.startswith("sim-ana") for w in warnings)
    assert app.get("vega_lite_chart"), "agreement over time is drawn"
    app.selectbox(key="agreement_level").set_value("response").run()
    assert not app.exception, app.exception
    assert app.selectbox(key="agreement_scale").options == ["binary"]


def test_calibration_page_shows_readiness_charts_alt_test_and_a_disagreement(store_copy):
    app = run_app(LEAD, "pages/calibration.py")
    assert any(e.value.startswith("Overall: not ready") for e in app.error)
    judge = table_with(app, "statistic", "sensitivity")
    assert list(judge["statistic"])[:2] == ["sensitivity", "specificity"]
    assert len(app.get("vega_lite_chart")) >= 1  # the confusion matrix
    assert not app.get("html")  # the disagreements' tab is not drawn until opened
    tab(app, "Per slice")
    assert len(app.get("vega_lite_chart")) == 1  # sensitivity and specificity per slice
    slices = next(d.value for d in app.dataframe if "slice" in d.value.columns)
    assert len(slices) >= 2 and slices["slice"].str.startswith("feature=").all()
    assert "Alternative annotator test" in [s.value for s in tab(app, "As a rater").subheader]
    assert len(table_with(app, "reviewer", "sim-ana")) == 3
    assert table_with(tab(app, "Disagreements"), "kind", "missed").shape[0] >= 1
    assert app.get("html"), "the chosen disagreement's claim and context are shown"
    tab(app, "Settings and report").button(key="calibration_prepare").click().run()
    assert not app.exception, app.exception
    assert len([b for b in app.button if b.key.startswith("calibration_download_")]) == 3


def test_an_auditor_reads_both_pages_but_cannot_save_thresholds(store_copy):
    app = run_app(AUDITOR, "pages/calibration.py")
    assert "Calibration of the judge" in [t.value for t in app.title]
    assert table_with(tab(app, "Settings and report"), "threshold on", "sensitivity") is not None
    assert not [b for b in app.button if b.key == "calibration_save_thresholds"]
    assert not [b for b in app.button if b.key == "calibration_map_save"]
    assert not [n for n in app.number_input if n.key.startswith("calibration_min_")]
    app.switch_page("pages/agreement.py").run()
    assert not app.exception, app.exception


def stored_settings(path: Path) -> tuple[list, list]:
    """Every setting and every judge label mapping in the store file, to compare."""
    store = open_store(path)
    try:
        return (
            store.fetchall("SELECT key, value FROM settings ORDER BY key"),
            store.fetchall("SELECT * FROM judge_label_map ORDER BY id"),
        )
    finally:
        store.close()


def test_an_auditor_changes_every_widget_but_no_setting_and_the_report_keeps_the_saved_ones(
    store_copy,
):
    # Issue 10, "Read-only means read-only": a lead saved strict thresholds.
    store = open_store(store_copy)
    save_thresholds(store, {"cohen_kappa": 0.9, "sensitivity": 0.95, "specificity": 0.9})
    saved = load_thresholds(store)
    store.close()
    before = stored_settings(store_copy)
    app = run_app(AUDITOR, "pages/calibration.py")
    app.selectbox(key="calibration_sample").set_value("demo").run()
    app.multiselect(key="calibration_by").set_value(["feature", "model"]).run()
    app.selectbox(key="calibration_level").set_value("response").run()
    app.selectbox(key="calibration_level").set_value("claim").run()
    for box in [b for b in tab(app, "Disagreements").selectbox if b.key == "calibration_open"]:
        box.set_value(1).run()
    for name in ("Disagreements", "Settings and report"):
        for check in tab(app, name).checkbox:
            check.set_value(not check.value).run()
    assert not app.exception, app.exception
    assert any(e.value.startswith("Overall: not ready") for e in app.error)
    app.button(key="calibration_prepare").click().run()
    assert not app.exception, app.exception
    assert stored_settings(store_copy) == before  # nothing the auditor did was stored
    _, files = app.session_state["calibration_report"]
    report = json.loads(files["report.json"])
    assert report["calibration"]["thresholds"] == saved
    checks = {c["statistic"]: c["threshold"] for c in report["calibration"]["readiness"]["checks"]}
    assert checks == saved
    assert "Overall: ready" not in files["report.md"]
    assert report["prepared_by"] == "audrey"
    store = open_store(store_copy)
    acts = activity(store, kind="report")
    store.close()
    assert (acts[-1]["actor"], acts[-1]["origin"]) == ("audrey", "app")  # an act, not a setting


def test_a_leads_unsaved_edit_changes_no_verdict_until_saved(store_copy):
    app = tab(run_app(LEAD, "pages/calibration.py"), "Settings and report")
    app.number_input(key="calibration_min_cohen_kappa").set_value(-1.0)
    app.number_input(key="calibration_min_sensitivity").set_value(0.0).run()
    assert any(e.value.startswith("Overall: not ready") for e in app.error)  # not saved yet


def test_a_lead_maps_a_judge_label_on_the_page(store_copy):
    app = tab(run_app(LEAD, "pages/calibration.py"), "Settings and report")
    app.selectbox(key="calibration_map_label").set_value("unsupported")
    app.selectbox(key="calibration_map_outcome").set_value("unsupported")
    app.button(key="calibration_map_save").click().run()
    assert not app.exception, app.exception
    mapping = table_with(app, "label", "unsupported")
    row = mapping[mapping["label"] == "unsupported"].iloc[0]
    assert row["source"].startswith("set by lena")


def test_a_lead_saves_thresholds_that_change_the_verdict(store_copy):
    app = tab(run_app(LEAD, "pages/calibration.py"), "Settings and report")
    app.number_input(key="calibration_min_cohen_kappa").set_value(-1.0)
    app.number_input(key="calibration_min_sensitivity").set_value(0.0)
    app.button(key="calibration_save_thresholds").click().run()
    assert not app.exception, app.exception
    assert any(s.value.startswith("Overall: ready") for s in app.success)
    store = open_store(store_copy)
    acts = activity(store, kind="setting")
    store.close()
    assert (acts[-1]["actor"], acts[-1]["subject"]) == ("lena", "readiness")


def unescaped(markdown: str) -> str:
    """The text a reader sees of ui.md's escaped Markdown."""
    return re.sub(r"\\(.)", r"\1", markdown)


def test_an_unmapped_judge_label_stops_the_page_until_a_lead_maps_it(store_copy, tmp_path):
    from annotate.ingest.importer import import_traces

    row = {
        "trace_id": "unmapped-1",
        "context": ["The refund takes 5 days."],
        "response": "The refund takes 5 days.",
        "judge": [{"judge": "prod-judge-v3", "level": "response", "label": "true"}],
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    store = open_store(store_copy)
    import_traces(store, path)
    store.close()
    auditor = run_app(AUDITOR, "pages/calibration.py")
    assert any("'true' (1 verdict)" in unescaped(e.value) for e in auditor.error)
    assert not [b for b in auditor.button if b.key == "calibration_map_save"]
    lead = run_app(LEAD, "pages/calibration.py")
    said = " ".join(unescaped(e.value) for e in lead.error)  # in the app's words: no flag
    assert "on the Calibration page (lead), or with the command line." in said
    assert "--" not in said
    lead.selectbox(key="calibration_map_label").set_value("true")
    lead.selectbox(key="calibration_map_outcome").set_value("supported")
    lead.button(key="calibration_map_save").click().run()
    assert not lead.exception, lead.exception
    assert any(e.value.startswith("Overall: not ready") for e in lead.error)


def test_a_revisit_draws_the_same_charts_without_building_them_again(store_copy, monkeypatch):
    """Catches a chart built on every visit (building and validating the altair charts was
    the largest part of a Calibration revisit), or a cached chart drawn for other numbers."""
    from annotate.report import charts

    built: list[dict] = []
    confusion_chart = charts.confusion_chart

    def counted(confusion, *args):
        built.append(dict(confusion))
        return confusion_chart(confusion, *args)

    monkeypatch.setattr(charts, "confusion_chart", counted)
    first = run_app(LEAD, "pages/calibration.py")
    again = run_app(LEAD, "pages/calibration.py")  # a new session: a revisit
    assert len(built) == 1
    specs = [[e.proto.spec for e in app.get("vega_lite_chart")] for app in (first, again)]
    assert specs[0] == specs[1] and specs[0]
    cells = {k: built[0][k] for k in ("tp", "fp", "tn", "fn")}
    assert sum(cells.values()) > 0
    shown = first.get("vega_lite_chart")[0].proto
    rows = [r for d in shown.datasets for r in _arrow_rows(d.data.data)]
    assert sorted(r["units"] for r in rows if "units" in r) == sorted(cells.values())


def _arrow_rows(buffer: bytes) -> list[dict]:
    import pyarrow as pa

    return pa.ipc.open_stream(buffer).read_all().to_pylist()


@pytest.fixture
def rubric_judged(db_path, tmp_path, monkeypatch) -> str:
    """A store whose sample `loop` our own (offline) judge has judged: its name."""
    from rubric_data import prepare_rubric_store

    from annotate.accounts.users import add_user
    from annotate.judge.rubrics.runner import run_judge

    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=60)
    add_user(store, "lena", "lead", "correct horse battery")
    judge = run_judge(store, "loop", 1, model="offline-baseline").judge
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(db_path))
    return judge


def test_the_report_of_our_judge_says_which_part_it_was_scored_on(rubric_judged, db_path):
    """Catches report.md and report.html that never said their numbers were the held-out
    part (only report.json had `part`)."""
    from annotate.judge.rubrics.card import judge_calibration
    from annotate.report.document import build_report, render_report

    store = open_store(db_path)
    try:
        files = {}
        for part in ("held_out", "tuning", None):
            document = judge_calibration(store, rubric_judged, "loop", part, repetitions=50)
            files[part] = render_report(build_report(store, document, repetitions=50))
    finally:
        store.close()
    assert (
        "with gold, scored on the held-out part of the sample's split"
        in files["held_out"]["report.md"]
    )
    assert "scored on the tuning part" in files["tuning"]["report.html"]
    assert "scored on" not in files[None]["report.md"]


def test_a_prepared_report_goes_when_the_part_scored_changes(rubric_judged):
    """Catches report.json of the held-out part offered after the lead chose another: the
    prepared files were kept against the judge, sample, level and slices, not the part."""
    judge = rubric_judged
    app = run_app(LEAD, "pages/calibration.py")
    app.selectbox(key="calibration_judge").select(judge).run()
    app.selectbox(key="calibration_sample").select("loop").run()
    assert app.radio(key="calibration_part").value == "held_out"
    tab(app, "Settings and report").button(key="calibration_prepare").click().run()
    assert len([b for b in app.button if b.key.startswith("calibration_download_")]) == 3
    app.radio(key="calibration_part").set_value("tuning").run()
    assert not app.exception, app.exception
    assert len([b for b in app.button if b.key.startswith("calibration_download_")]) == 0


def test_the_disagreements_show_a_page_at_a_time_and_every_page_opens(store_copy, monkeypatch):
    """A large table (1,999 rows at 300,000 traces) is drawn a page at a time; each page's
    claims are the ones the box opens, and the pages together hold every disagreement."""
    from widgets import calibration as calibration_widgets

    monkeypatch.setattr(calibration_widgets, "PAGE_ROWS", 3)
    app = tab(run_app(AUDITOR, "pages/calibration.py"), "Disagreements")
    heading = next(s.value for s in app.subheader if s.value.startswith("Disagreements with gold"))
    total = int(re.search(r"\((\d+)\)", heading).group(1))
    assert total > 6
    pages = -(-total // 3)
    seen = []
    for page in range(1, pages + 1):
        app.number_input(key="calibration_disagreements_page").set_value(page).run()
        assert not app.exception, app.exception
        table = next(t.value for t in app.dataframe if "judge_label" in t.value.columns)
        assert len(table) == (3 if page < pages else total - 3 * (pages - 1))
        assert any(f"Rows {3 * page - 2} to {3 * page - 3 + len(table)} of {total}" in c.value
                   for c in app.caption)  # fmt: skip
        seen += list(zip(table["trace_id"], table["claim_index"], strict=True))
        box = [b for b in app.selectbox if b.key.startswith("calibration_open")]
        claims = table[table["claim_index"].notna()]
        assert len(box) == (1 if len(claims) else 0)
        if box:
            assert len(box[0].options) == len(claims)
    assert len(seen) == total == len(set(seen))
