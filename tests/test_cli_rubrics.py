"""`annotate judge` and `annotate rubric ...`: exit codes, --json, --dry-run, a rerun that
retries only the failed calls, status counts, and the Rubric page for each role."""

# ruff: noqa: F811 - the fake_anthropic fixture is imported by name
from __future__ import annotations

import json
import re

import pytest
from conftest import plain, run_app
from fake_anthropic import fake_anthropic, message  # noqa: F401 - the fixture
from judge_fakes import answer
from rubric_data import prepare_rubric_store

from annotate.accounts.users import User, add_user
from annotate.store import open_store


@pytest.fixture
def loop_db(db_path, tmp_path):
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=6)
    add_user(store, "lena", "lead", "correct horse battery")
    store.close()
    return db_path


def test_the_baseline_judge_runs_without_a_key_and_counts_in_status(loop_db, cli, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    done = cli("judge", "--sample", "loop", "--baseline", "--json", "--as", "lena")
    assert done.code == 0, done.err
    report = done.json()
    assert (report["judge"], report["judged"], report["failed"]) == (
        "rubric-v1:offline-baseline",
        12,
        0,
    )
    status = cli("status", "--json").json()
    assert status["judge_verdicts"] == 12 and status["judge_verdicts_by_origin"] == {"run": 12}
    again = cli("judge", "--sample", "loop", "--baseline", "--json").json()
    assert (again["already_done"], again["judged"]) == (12, 0)
    acts = cli("activity", "--kind", "judge_run", "--json")
    assert acts.code == 0


def test_no_key_is_a_usage_error_that_names_the_baseline(loop_db, cli, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = cli("judge", "--sample", "loop")
    assert result.code == 2 and "ANTHROPIC_API_KEY" in result.err and "--baseline" in result.err


def test_a_dry_run_estimates_and_calls_nothing(loop_db, cli, fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    result = cli("judge", "--sample", "loop", "--dry-run", "--json")
    assert result.code == 0
    plan = result.json()
    assert plan["dry_run"] and plan["to_judge"] == 12 and plan["estimate"]["usd"] > 0
    assert fake_anthropic.requests == []
    batch = cli("judge", "--sample", "loop", "--dry-run", "--batch", "--json").json()
    assert batch["estimate"]["usd"] == pytest.approx(plan["estimate"]["usd"] / 2, abs=1e-4)


def test_failed_calls_exit_1_are_listed_and_a_rerun_retries_only_them(
    loop_db, cli, fake_anthropic, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.responder = answer
    fake_anthropic.reply(
        200,
        message("I think it is supported."),
        when="INV-1004 was issued by Acme Billing.\\n</claim>",
    )
    first = cli("judge", "--sample", "loop", "--concurrency", "2")
    assert first.code == 1
    assert "failed rt-004 claim 0: the judge answer did not parse" in first.out
    assert "retry only these" in first.out
    calls = len(fake_anthropic.message_requests())
    second = cli("judge", "--sample", "loop", "--json")
    assert second.code == 0 and second.json()["judged"] == 1
    assert len(fake_anthropic.message_requests()) == calls + 1


def test_the_rubric_help_lists_every_rubric_subcommand(cli):
    group = cli("rubric", "--help", db=None)
    assert group.code == 0
    usage = " ".join(group.out.split())
    registered = re.search(r"annotate rubric \[-h\] \{([a-z,]+)\}", usage)[1].split(",")
    assert {"list", "calibrate", "propose"} <= set(registered)
    listed = f"rubric versions: {', '.join(registered)}"
    assert listed in usage  # the group's own help
    every = cli("--help", db=None)
    assert every.code == 0 and f"rubric {listed}" in " ".join(every.out.split())


def test_rubric_list_show_export_import(loop_db, cli, tmp_path):
    listed = cli("rubric", "list", "--json").json()["rubrics"]
    assert [(r["version"], r["current"]) for r in listed] == [(1, True)]
    shown = cli("rubric", "show", "1", "--json").json()
    assert shown["rubric"]["granularity"] == "claim" and shown["calibrations"] == []
    out = tmp_path / "v1.yaml"
    assert cli("rubric", "export", "1", "--out", str(out)).code == 0
    imported = cli("rubric", "import", str(out), "--json").json()
    assert imported["version"] == 1
    edited = out.read_text().replace("granularity: claim", "granularity: question")
    (tmp_path / "v2.yaml").write_text(edited)
    assert cli("rubric", "import", str(tmp_path / "v2.yaml"), "--json").json()["version"] == 2
    assert cli("rubric", "current", "2", "--as", "lena").code == 0
    assert cli("rubric", "list", "--json").json()["rubrics"][1]["current"] is True
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: nope\n")
    assert cli("rubric", "import", str(bad)).code == 2
    assert cli("rubric", "show", "9").code == 2
    markdown = cli("rubric", "export", "1", "--format", "markdown").out
    assert markdown.startswith("# Rubric version 1") and "Not marked calibrated." in markdown


def test_the_rubric_page_lets_a_lead_run_the_baseline_and_an_auditor_only_read(
    loop_db, monkeypatch
):
    monkeypatch.setenv("ANNOTATE_DB", str(loop_db))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    lead = run_app(User("lena", "lead"), "pages/rubric.py")
    assert any("No ANTHROPIC_API_KEY" in i.value for i in lead.info)
    lead.selectbox(key="rubric_run_mode").set_value("baseline").run()
    lead.button(key="rubric_run").click().run()
    assert not lead.exception, lead.exception
    assert any("done: 12 verdicts, 0 failed" in s.value for s in lead.success)
    auditor = run_app(User("audrey", "auditor"), "pages/rubric.py")
    assert not auditor.exception
    keys = {b.key for b in auditor.button}
    assert "rubric_run" not in keys and "rubric_make_current" not in keys
    assert any("only a lead" in c.value for c in auditor.caption)
    store = open_store(loop_db)
    try:
        acts = store.fetchall("SELECT actor FROM activity WHERE kind = 'judge_run'")
    finally:
        store.close()
    assert acts == [("lena",)]
    assert json.dumps(acts)


def test_the_rubric_page_says_when_a_save_stores_nothing_new(loop_db, monkeypatch):
    monkeypatch.setenv("ANNOTATE_DB", str(loop_db))
    app = run_app(User("lena", "lead"), "pages/rubric.py")

    def save(text: str) -> None:
        app.text_area(key="rubric_edit_text").input(text)
        next(b for b in app.button if b.label == "Save as a new version").click().run()
        assert not app.exception, app.exception

    save("Mark a claim unsupported when no context sentence states it.")
    assert [plain(s.value) for s in app.success] == ["Saved as version 2"]
    save("Mark a claim unsupported when no context sentence states it.")  # the same again
    assert not app.success
    assert [plain(i.value) for i in app.info if "Nothing new" in i.value] == [
        "Nothing new to save: version 2 already says exactly this."
    ]
    store = open_store(loop_db)
    try:
        assert store.scalar("SELECT count(*) FROM rubrics") == 2
    finally:
        store.close()


def test_the_rubric_page_compares_versions_marks_calibrated_and_shows_staleness(
    db_path, tmp_path, monkeypatch
):
    from annotate.agreement.calibration import save_thresholds
    from annotate.judge.rubrics.runner import run_judge
    from annotate.judge.rubrics.versions import edit_rubric, make_current

    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=90)
    save_thresholds(store, {"cohen_kappa": 0.5, "sensitivity": 0.5, "specificity": None}, "lena")
    first = edit_rubric(store, 1, {"model": "offline-baseline"}, "lena").version
    second = edit_rubric(store, first, {"instructions": "Stricter."}, "lena").version
    make_current(store, first, "lena")
    judges = [run_judge(store, "loop", v).judge for v in (first, second)]
    store.execute(
        f"UPDATE judge_verdicts SET label = 'supported' WHERE judge = '{judges[0]}' AND trace_id = 'rt-000'"
    )
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(db_path))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    app.multiselect(key="rubric_compare").set_value(judges).run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    frames = [d.value for d in app.dataframe]
    table = next(f for f in frames if {"judge", "statistic"} <= set(f.columns))
    assert set(table["judge"]) == set(judges)
    [flips] = [f for f in frames if "flip" in f.columns]
    assert list(flips["flip"]) == ["wrong to right"] and list(flips["trace_id"]) == ["rt-000"]
    app.selectbox(key="rubric_version").set_value(first).run()
    app.button(key="rubric_mark").click().run()
    assert not app.exception, app.exception
    assert any("Calibrated for" in s.value for s in app.success)
    app.run()  # the card is drawn above the button: the next run shows it
    assert any("Fresh: fingerprint" in s.value for s in app.success)
    store = open_store(db_path)
    make_current(store, second, "lena")
    store.close()
    app.run()
    assert any(
        plain(e.value).startswith("stale: recalibrate (rubric_version 2 -> 3") for e in app.error
    )


def test_annotate_calibration_scores_our_judge_on_the_held_out_part(loop_db, cli):
    assert cli("judge", "--sample", "loop", "--baseline").code == 0
    judge = "rubric-v1:offline-baseline"
    held = cli(
        "calibration", "--judge", judge, "--sample", "loop", "--json", "--resamples", "200"
    ).json()
    every = cli(
        "calibration",
        "--judge",
        judge,
        "--sample",
        "loop",
        "--part",
        "all",
        "--json",
        "--resamples",
        "200",
    ).json()
    assert (held["part"], every["part"]) == ("held_out", "all")
    assert every["n"] == 12 and held["n"] == 4  # 30% of each stratum, half up


def test_rubric_propose_drafts_a_new_version_from_the_tuning_disagreements(
    loop_db, cli, fake_anthropic, monkeypatch
):
    assert cli("judge", "--sample", "loop", "--baseline").code == 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    nothing = cli("rubric", "propose", "1", "--sample", "loop", "--model", "offline-baseline")
    assert nothing.code == 2 and "no disagreement with gold" in nothing.err
    store = open_store(loop_db)
    store.execute("UPDATE judge_verdicts SET label = 'supported'")  # misses every wrong amount
    store.close()
    body = {"rationale": "amounts", "instructions": "Compare every amount.", "few_shot": []}
    fake_anthropic.reply(200, message(json.dumps(body)))
    done = cli(
        "rubric", "propose", "1", "--sample", "loop", "--model", "offline-baseline", "--json",
        "--as", "lena",
    )  # fmt: skip
    assert done.code == 0, done.err
    draft = done.json()
    assert (draft["version"], draft["parent"]) == (2, 1) and "a draft" in draft["note"]
    [request] = fake_anthropic.message_requests()
    assert request["model"] == "claude-haiku-4-5"  # the baseline is no model to ask
    shown = cli("rubric", "show", "2", "--json").json()
    assert shown["rubric"]["instructions"] == "Compare every amount." and not shown["current"]
