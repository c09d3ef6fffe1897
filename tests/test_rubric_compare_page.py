"""The Rubric page's "Versions side by side" shows the intervals the library and the CLI give
for the same judge on the same claims: one resampling default everywhere."""

from __future__ import annotations

import math

import pytest
from conftest import run_app
from rubric_data import prepare_rubric_store

from annotate.accounts.users import User
from annotate.store import open_store

STATISTICS = ("cohen_kappa", "sensitivity", "specificity")


@pytest.fixture
def two_judges(db_path, tmp_path) -> list[str]:
    from annotate.judge.rubrics.runner import run_judge
    from annotate.judge.rubrics.versions import edit_rubric

    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=90)
    first = edit_rubric(store, 1, {"model": "offline-baseline"}, "lena").version
    second = edit_rubric(store, first, {"instructions": "Stricter."}, "lena").version
    judges = [run_judge(store, "loop", v).judge for v in (first, second)]
    # the first judge misses some wrong amounts: intervals that depend on the resamples
    store.execute(
        f"UPDATE judge_verdicts SET label = 'supported' WHERE judge = '{judges[0]}' "
        "AND trace_id IN ('rt-000', 'rt-003', 'rt-006', 'rt-009', 'rt-012')"
    )
    store.close()
    return judges


def page_bounds(db_path, monkeypatch, judges: list[str]) -> dict[tuple[str, str], tuple]:
    monkeypatch.setenv("ANNOTATE_DB", str(db_path))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    app.multiselect(key="rubric_compare").set_value(judges).run()
    assert not app.exception, app.exception
    frames = [d.value for d in app.dataframe]
    table = next(f for f in frames if {"judge", "statistic"} <= set(f.columns))
    return {(r.judge, r.statistic): (r.value, r.low, r.high) for r in table.itertuples()}


def same(a: tuple, b: tuple) -> bool:
    return all(
        (x is None or (isinstance(x, float) and math.isnan(x)))
        and (y is None or (isinstance(y, float) and math.isnan(y)))
        or x == pytest.approx(y, abs=1e-12)
        for x, y in zip(a, b, strict=True)
    )


def test_the_page_compares_with_the_intervals_of_the_library_and_the_cli(
    two_judges, db_path, monkeypatch, cli
):
    from annotate.judge.rubrics.loop import compare

    shown = page_bounds(db_path, monkeypatch, two_judges)
    store = open_store(db_path)
    try:
        library = compare(store, two_judges, "loop")
    finally:
        store.close()
    assert library["claims"] > 0
    for row in library["judges"]:
        for name in STATISTICS:
            stat = row[name]
            assert same(
                shown[(row["judge"], name)], (stat.get("value"), stat.get("low"), stat.get("high"))
            )
    for judge in two_judges:  # every held-out claim was judged by both: the CLI's claims too
        document = cli("calibration", "--judge", judge, "--sample", "loop", "--json").json()
        assert document["n"] == library["claims"]
        for name in STATISTICS:
            stat = document[name]
            assert same(
                shown[(judge, name)], (stat.get("value"), stat.get("low"), stat.get("high"))
            )
    low, high = shown[(two_judges[0], "sensitivity")][1:]
    assert low < high  # a real interval, not a point
