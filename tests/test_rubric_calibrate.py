"""`annotate rubric calibrate` always prints the card (the same document with --json); a judge
ready on no slice marks nothing and exits 1, saying why and what to do; the Rubric page's
"Mark calibrated" shows the same reason and the card instead of storing a mark."""

from __future__ import annotations

import pytest
from conftest import plain, run_app
from rubric_data import prepare_rubric_store

from annotate.accounts.users import User, add_user
from annotate.judge.rubrics.runner import run_judge
from annotate.judge.rubrics.versions import edit_rubric
from annotate.store import open_store

BASELINE = "offline-baseline"
JUDGE = f"rubric-v1:{BASELINE}"


@pytest.fixture
def judged_db(db_path, tmp_path):
    """Six traces judged by the baseline: far too few held-out claims for the default
    thresholds (kappa 0.6, sensitivity 0.8 on the lower bounds), so no slice is ready."""
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=6)
    add_user(store, "lena", "lead", "correct horse battery")
    run_judge(store, "loop", 1, model=BASELINE)
    store.close()
    return db_path


def stored_marks(db_path) -> int:
    store = open_store(db_path)
    try:
        return store.scalar("SELECT count(*) FROM rubric_calibrations")
    finally:
        store.close()


def test_a_judge_ready_on_no_slice_prints_the_card_as_json_and_exits_1(judged_db, cli):
    done = cli(
        "rubric", "calibrate", "1", "--sample", "loop", "--model", BASELINE, "--json",
        "--as", "lena",
    )  # fmt: skip
    assert done.code == 1, done.err
    document = done.json()
    assert (document["id"], document["slices"]) == (None, [])
    assert set(document) == {"id", "slices", "card", "status"}  # the shape of a marked card
    held = document["card"]["held_out"]
    assert document["card"]["judge"] == JUDGE and held["readiness"]["ready"] is False
    assert held["readiness"]["verdict"].startswith("not ready: lower bound below threshold")
    assert [s["readiness"]["verdict"] for s in held["slices"]] == [
        "not ready: too few gold units"
    ] * 2
    assert done.err.startswith(f"nothing marked: {JUDGE} meets the readiness thresholds on no")
    assert "label more claims" in done.err and "--min-kappa" in done.err
    assert "error" not in done.err
    assert stored_marks(judged_db) == 0
    assert cli("rubric", "show", "1", "--json").json()["calibrations"] == []


def test_without_json_the_not_ready_card_is_printed_for_people(judged_db, cli):
    done = cli("rubric", "calibrate", "1", "--sample", "loop", "--model", BASELINE)
    assert done.code == 1, done.err
    assert done.out.startswith("## Calibration card")
    assert "Readiness: not ready: lower bound below threshold" in done.out
    assert "| feature=billing\\_qa | 2 |" in done.out and "too few gold units" in done.out
    assert "nothing marked" in done.err and "nothing marked" not in done.out
    assert stored_marks(judged_db) == 0


def test_the_rubric_page_shows_why_nothing_was_marked_with_the_card(judged_db, monkeypatch):
    store = open_store(judged_db)
    version = edit_rubric(store, 1, {"model": BASELINE}, "lena").version
    run_judge(store, "loop", version)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(judged_db))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    app.selectbox(key="rubric_version").set_value(version).run()
    app.button(key="rubric_mark").click().run()
    assert not app.exception, app.exception
    assert not app.success and not app.error
    [warning] = [plain(w.value) for w in app.warning]
    assert warning.startswith(f"nothing marked: rubric-v{version}:{BASELINE} meets the readiness")
    assert "the command line" in warning and "--" not in warning
    cards = [c.value for c in app.code if c.value.startswith("## Calibration card")]
    assert len(cards) == 1 and "too few gold units" in cards[0]
    assert stored_marks(judged_db) == 0


def test_a_store_without_judge_verdicts_names_the_judge_command(cli, db_path):
    """The message said only "import traces with judge verdicts"; a judge owner runs one."""
    from annotate.store import open_store

    open_store(db_path).close()
    result = cli("calibration", "--judge", "groundedness")
    assert result.code == 2
    assert "run a rubric as the judge: annotate judge --sample NAME" in result.err
