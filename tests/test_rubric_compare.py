"""`annotate rubric compare`: two versions judged through the real SDK against the fake server on
the same labelled claims, B better on sensitivity by a known margin. The paired interval of the
difference excludes 0 where each version's own intervals overlap; McNemar's p is scipy's exact
binomial test on the discordant claims; the page and the CLI show the same numbers."""

from __future__ import annotations

import math
import shutil

import pytest
from conftest import plain, run_app
from fake_anthropic import FakeAnthropic, start, stop
from rubric_compare_data import (
    FALSE_ALARM_BY_B,
    MISSED_BY_A,
    MISSED_BY_B,
    SENSITIVITY_GAIN,
    judge_both,
    two_versions,
)
from scipy.stats import binomtest

from annotate.accounts.users import User
from annotate.judge.rubrics.compare import PAIRED_STATISTICS, compare_versions, mcnemar_exact
from annotate.store import open_store


@pytest.fixture(scope="module")
def judged_file(tmp_path_factory):
    """Judged once for the module (the SDK's calls take a while); each test copies the file."""
    folder = tmp_path_factory.mktemp("compared")
    fake = FakeAnthropic()
    thread = start(fake)
    store = open_store(folder / "judged.duckdb")
    try:
        versions = two_versions(store, folder)
        runs = judge_both(store, fake, versions)
        assert [(r.judged, r.failed) for r in runs] == [(180, 0), (180, 0)]
    finally:
        store.close()
        stop(fake, thread)
    return folder / "judged.duckdb", versions, [r.judge for r in runs]


@pytest.fixture
def compared_db(judged_file, db_path):
    source, versions, judges = judged_file
    shutil.copyfile(source, db_path)
    return db_path, versions, judges


def library(db_path, judges, **options):
    store = open_store(db_path)
    try:
        return compare_versions(store, *judges, "loop", **options)
    finally:
        store.close()


def test_the_paired_interval_excludes_zero_where_the_unpaired_ones_overlap(compared_db):
    db_path, _, judges = compared_db
    document = library(db_path, judges, part="all")
    assert document["claims"] == 180
    first, second = document["versions"]
    assert second["sensitivity"]["value"] - first["sensitivity"]["value"] == pytest.approx(
        SENSITIVITY_GAIN
    )
    assert first["sensitivity"]["high"] > second["sensitivity"]["low"]  # they overlap
    paired = document["difference"]["sensitivity"]
    assert paired["value"] == pytest.approx(SENSITIVITY_GAIN)
    assert 0 < paired["low"] < paired["value"] < paired["high"]
    assert "paired" in paired["method"] and "within 2 strata" in paired["method"]


def test_mcnemar_is_scipys_exact_binomial_test_on_the_discordant_claims(compared_db):
    db_path, _, judges = compared_db
    test = library(db_path, judges, part="all")["difference"]["mcnemar"]
    wrong_to_right = len(MISSED_BY_A - MISSED_BY_B)
    assert (test["right_to_wrong"], test["wrong_to_right"]) == (FALSE_ALARM_BY_B, wrong_to_right)
    expected = binomtest(FALSE_ALARM_BY_B, FALSE_ALARM_BY_B + wrong_to_right, 0.5).pvalue
    assert test["p"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("a_only", "b_only"), [(0, 0), (0, 1), (3, 3), (2, 9), (17, 40), (300, 260)]
)
def test_exact_mcnemar_equals_scipy(a_only, b_only):
    expected = binomtest(a_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12)


def test_the_flips_name_trace_claim_and_gold(compared_db):
    db_path, _, judges = compared_db
    flips = library(db_path, judges, part="all")["flips"]
    right_to_wrong = [f for f in flips if f["flip"] == "right to wrong"]
    assert [(f["trace_id"], f["claim_index"], f["gold"]) for f in right_to_wrong] == [
        ("rt-001", 1, "supported")
    ]
    wrong_to_right = {f["trace_id"] for f in flips if f["flip"] == "wrong to right"}
    assert wrong_to_right == {f"rt-{i:03d}" for i in MISSED_BY_A - MISSED_BY_B}
    assert all(f["claim"].startswith("The amount due is $") for f in flips)


def test_the_cli_prints_the_librarys_numbers_and_exits_by_the_margin(compared_db, cli):
    db_path, versions, judges = compared_db
    expected = library(db_path, judges, part="all", by=("feature",))
    run = cli("rubric", "compare", *map(str, versions), "--sample", "loop", "--part", "all",
              "--by", "feature", "--json")  # fmt: skip
    assert run.code == 0, run.err
    shown = run.json()
    for name in PAIRED_STATISTICS:
        assert shown["difference"][name] == expected["difference"][name]
    assert shown["slices"] == expected["slices"] and len(shown["slices"]) == 2
    text = cli("rubric", "compare", *map(str, versions), "--sample", "loop", "--part", "all")
    assert text.code == 0 and text.err == ""
    paired = expected["difference"]["sensitivity"]
    assert f"+{paired['value']:.3f} [+{paired['low']:.3f}, +{paired['high']:.3f}]" in text.out
    assert f"p = {expected['difference']['mcnemar']['p']:.4g}" in text.out
    assert "rt-001 claim 1 (gold supported; A supported, B unsupported)" in text.out
    backwards = cli("rubric", "compare", *map(str, versions[::-1]), "--sample", "loop",
                    "--part", "all")  # fmt: skip
    assert backwards.code == 1 and "fail: B may be worse than A" in backwards.out
    assert "sensitivity" in backwards.out.splitlines()[-1]
    loose = cli("rubric", "compare", *map(str, versions[::-1]), "--sample", "loop",
                "--part", "all", "--margin", "0.9")  # fmt: skip
    assert loose.code == 0


def test_the_page_shows_the_numbers_of_the_cli(compared_db, cli, monkeypatch):
    db_path, versions, judges = compared_db
    shown = cli("rubric", "compare", *judges, "--sample", "loop", "--part", "all", "--json").json()
    monkeypatch.setenv("ANNOTATE_DB", str(db_path))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    app.selectbox(key="rubric_compare_part").set_value("all")
    app.multiselect(key="rubric_compare").set_value(judges).run()
    assert not app.exception, app.exception
    frames = [d.value for d in app.dataframe]
    table = next(f for f in frames if "difference" in f.columns).set_index("statistic")
    for name in PAIRED_STATISTICS:
        stat = shown["difference"][name]
        assert table.loc[name, "difference"] == pytest.approx(stat["value"], abs=1e-12)
        assert table.loc[name, "low"] == pytest.approx(stat["low"], abs=1e-12)
        assert table.loc[name, "high"] == pytest.approx(stat["high"], abs=1e-12)
        for side, version in zip("ab", shown["versions"], strict=True):
            own = version[name]
            assert table.loc[name, f"{side}_low"] == pytest.approx(own["low"], abs=1e-12)
    test = shown["difference"]["mcnemar"]
    assert any(f"p = {test['p']:.4g}" in plain(c.value) for c in app.caption)
    [flips] = [f for f in frames if "flip" in f.columns]
    assert len(flips) == len(shown["flips"])
    assert not math.isnan(table.loc["sensitivity", "low"])
