"""Issue 36's no silent press, small: three reviewers pressing at once on one app, by key and
by click, each press followed on its websocket to the run that answers it; then every press
is checked against the store's label events (tests/bench/bench_label_load.py at 8 x 250)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.bench.bench_label_load import app_labels, drive, label_events, tally
from tests.bench.label_pages import fill_store
from tests.browser.conftest import running_app

pytestmark = pytest.mark.browser

REVIEWERS = ["r1", "r2", "r3"]
PRESSES = 30


def test_every_press_of_three_reviewers_at_once_is_stored_or_answered(
    chromium: Path, tmp_path: Path
) -> None:
    db = tmp_path / "load.duckdb"
    fill_store(db, 300, sample=30, reviewers=REVIEWERS)  # 30 traces: 50+ claims each
    labels = app_labels(db)
    with running_app(db) as url:
        presses = asyncio.run(drive(url, REVIEWERS, PRESSES, labels))
    count = tally(presses, label_events(db))
    assert count["presses"] == PRESSES * len(REVIEWERS)
    assert count["silent"] == 0, [p for p in presses if p.kind == "silent"]
    assert count["lost"] == 0
    assert count["duplicated"] == 0
    assert count["unasked"] == 0  # nothing stored that the reviewer was not told of
    assert count["moved"] + count["messaged"] == count["presses"]
    assert count["stored"] == count["acknowledged"]  # each told "stored" has its event
