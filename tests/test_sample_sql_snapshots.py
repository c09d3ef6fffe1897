"""The SQL `annotate sample --emit-sql` prints, per dialect, pinned as golden files.

tests/fixtures/emitted_sql/<dialect>.sql holds the counts query and the rows query of one
spec (strata, filters, dates, a judge filter, judge_label counts). A change to the emitted
SQL fails here until the files are regenerated and the diff reviewed:

    ANNOTATE_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/test_sample_sql_snapshots.py

Each file is also parsed back by sqlglot in its own dialect, and what sqlglot generates
from that parse is the file's text again (DuckDB and Spark run theirs in
tests/test_sample_sources.py; the others are checked only here, with no engine at hand).
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import pytest
import sqlglot

from annotate.sampling.allocation import SampleSpec
from annotate.sampling.warehouse import DIALECTS, emit
from annotate.store.samples import Filters

SNAPSHOTS = Path(__file__).resolve().parent / "fixtures" / "emitted_sql"
UPDATE = os.environ.get("ANNOTATE_UPDATE_SNAPSHOTS") == "1"
SEPARATOR = "\n-- rows\n"
SPEC = SampleSpec(
    name="wh",
    n=200,
    by=("feature", "risk_category"),
    seed=20260401,
    filters=Filters(
        since=datetime(2026, 3, 1),
        until=datetime(2026, 4, 1),
        columns={"model": ("m-1", "m-2")},
        judge=("unsupported",),
    ),
)


def emitted(dialect: str) -> str:
    counts, rows = emit(SPEC, "lake.traces", dialect, judge_label=True)
    return f"-- counts\n{counts}{SEPARATOR}{rows}\n"


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_emitted_sql_matches_its_snapshot(dialect):
    path = SNAPSHOTS / f"{dialect}.sql"
    text = emitted(dialect)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no snapshot {path}: run with ANNOTATE_UPDATE_SNAPSHOTS=1"
    assert normalised(path.read_text()) == normalised(text)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_snapshot_parses_back_in_its_dialect(dialect):
    text = (SNAPSHOTS / f"{dialect}.sql").read_text()
    counts, rows = text.removeprefix("-- counts\n").split(SEPARATOR)
    for query in (counts, rows):
        tree = sqlglot.parse_one(query, read=dialect)
        assert isinstance(tree, sqlglot.exp.Select)
        assert normalised(tree.sql(dialect=dialect, pretty=True)) == normalised(query)
        assert {t.name for t in tree.find_all(sqlglot.exp.Table)} == {"traces"}
    assert f"'{SPEC.seed}:'" in rows
    assert "sample_rank <= 200" in rows
    assert "judge_label" in counts and "traces" in counts


def test_every_dialect_has_a_snapshot_and_no_other_file_is_left():
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.sql")) == sorted(DIALECTS)
