"""A card calibrated for a run's own model (`--model M`) is fresh for that judge; it turns stale
when the rubric changes, and a card for a version's default model turns stale when a new
current version changes that model."""

from __future__ import annotations

import pytest
from rubric_data import prepare_rubric_store

from annotate.agreement.calibration import save_thresholds
from annotate.judge.rubrics.versions import edit_rubric, get_rubric
from annotate.store import open_store

BASELINE = "offline-baseline"


@pytest.fixture
def calibrating_db(db_path, tmp_path):
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=90)
    save_thresholds(store, {"cohen_kappa": 0.5, "sensitivity": 0.5, "specificity": None}, "lena")
    assert get_rubric(store, 1).model != BASELINE  # so --model is a model of its own
    store.close()
    return db_path


def card_state(cli, version: int) -> str:
    [mark] = cli("rubric", "show", str(version), "--json").json()["calibrations"]
    return mark["status"]["status"]


def test_a_card_for_the_runs_own_model_is_fresh_for_that_judge(calibrating_db, cli):
    assert cli("judge", "--sample", "loop", "--model", BASELINE).code == 0
    marked = cli("rubric", "calibrate", "1", "--sample", "loop", "--model", BASELINE, "--json")
    assert marked.code == 0, marked.err
    assert marked.err.startswith("marked rubric v1 calibrated for overall")
    assert marked.json()["card"]["judge"] == f"rubric-v1:{BASELINE}"
    assert marked.json()["status"]["status"] == "fresh"
    assert card_state(cli, 1) == "fresh"
    shown = cli("rubric", "show", "1")
    assert "card: fresh" in shown.out and "stale" not in shown.out
    store = open_store(calibrating_db)
    edit_rubric(store, 1, {"instructions": "Compare every amount."}, "lena")
    store.close()
    assert cli("rubric", "current", "2").code == 0
    stale = card_state(cli, 1)
    assert stale.startswith("stale: recalibrate (rubric_version 1 -> 2, rubric_hash")
    assert "model" not in stale  # the judge would still run on the same model


def test_a_card_for_the_default_model_is_stale_when_the_current_model_changes(calibrating_db, cli):
    store = open_store(calibrating_db)
    edit_rubric(store, 1, {"model": BASELINE}, "lena")
    store.close()
    assert cli("judge", "--sample", "loop", "--rubric", "2").code == 0
    assert cli("rubric", "calibrate", "2", "--sample", "loop").code == 0
    assert cli("rubric", "current", "2").code == 0
    assert card_state(cli, 2) == "fresh"
    store = open_store(calibrating_db)
    newer = edit_rubric(store, 2, {"model": "claude-sonnet-4-5"}, "lena").version
    store.close()
    assert cli("rubric", "current", str(newer)).code == 0
    assert f"model {BASELINE} -> claude-sonnet-4-5" in card_state(cli, 2)
