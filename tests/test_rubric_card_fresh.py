"""The calibration card (issue 39): fresh right after `rubric calibrate` whatever version is
current; the Markdown card names the readiness thresholds and gives every slice's statistics
with their intervals, and says "too few to say" where a slice has too few units for one."""

from __future__ import annotations

import re

import pytest
from rubric_data import prepare_rubric_store

from annotate.agreement.calibration import save_thresholds
from annotate.judge.rubrics.versions import current_version, edit_rubric
from annotate.store import open_store


@pytest.fixture
def second_version_db(db_path, tmp_path, cli):
    """Version 2 (the offline baseline) judged while version 1 stays current."""
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=90)
    save_thresholds(store, {"cohen_kappa": 0.5, "sensitivity": 0.5, "specificity": None}, "lena")
    edit_rubric(store, 1, {"model": "offline-baseline"}, "lena")
    assert current_version(store) == 1
    store.close()
    assert cli("judge", "--sample", "loop", "--rubric", "2").code == 0
    return db_path


def test_a_card_is_fresh_after_calibrate_on_a_version_that_is_not_current(second_version_db, cli):
    marked = cli("rubric", "calibrate", "2", "--sample", "loop", "--json")
    assert marked.code == 0, marked.err
    assert marked.json()["status"]["status"] == "fresh"
    text = cli("rubric", "calibrate", "2", "--sample", "loop")
    assert "stale" not in text.out
    [mark, _] = cli("rubric", "show", "2", "--json").json()["calibrations"]
    assert mark["status"]["status"] == "fresh"
    newer = cli("rubric", "current", "1")  # the same version current: still fresh
    assert newer.code == 0
    assert (
        cli("rubric", "show", "2", "--json").json()["calibrations"][0]["status"]["stale"] is False
    )


def test_the_markdown_card_names_the_thresholds_and_every_slices_interval(second_version_db, cli):
    card = cli("rubric", "calibrate", "2", "--sample", "loop").out
    assert (
        "- Readiness thresholds (a part or slice is ready when every set one holds): "
        "cohen\\_kappa lower bound >= 0.5; sensitivity lower bound >= 0.5; specificity not set"
    ) in card
    rows = [line for line in card.splitlines() if line.startswith("| feature=")]
    assert len(rows) == 4  # two features, held-out and tuning
    document = cli("rubric", "calibrate", "2", "--sample", "loop", "--json").json()["card"]
    for part in ("held_out", "tuning"):
        for entry in document[part]["slices"]:
            for name in ("sensitivity", "specificity", "cohen_kappa"):
                stat = entry[name]
                if stat.get("low") is not None:
                    shown = f"{stat['value']:.3f} [{stat['low']:.3f}, {stat['high']:.3f}]"
                else:
                    assert stat["reason"].startswith("too few to say")
                    shown = f"{stat['value']:.3f} (too few to say"
                assert any(shown in row for row in rows), (shown, rows)
    assert "[0.000, 1.000]" not in card
    assert any(re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", row) for row in rows)
