"""The bundled sample gives every page its numbers (docs/getting-started.md walks through them):
a human rate overall and for each of the four features at both levels, the judge-corrected rate
overall, disagreements left to adjudicate, and a pace column on Home that never says "None"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_app

from annotate.accounts.users import User
from annotate.labelling.adjudication import disagreements
from annotate.labelling.assignment import assign
from annotate.store import open_store
from widgets.path import NO_PACE

LEAD = User("lena", "lead")
FEATURES = {"billing_qa", "code_assistant", "hr_policy", "medical_info"}


@pytest.fixture(scope="module")
def sample_store(bundled_store: Path) -> Path:
    """The store `make run` makes (`annotate init` on an empty file)."""
    return bundled_store


@pytest.fixture
def store_copy(sample_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "annotate.duckdb"
    shutil.copy(sample_store, path)
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    return path


def rates_table(app):
    return next(e.value for e in app.dataframe if "estimator" in e.value.columns)


@pytest.mark.parametrize("level", ["response", "claim"])
def test_the_rates_page_has_a_human_rate_overall_and_for_every_feature(store_copy, level):
    app = run_app(LEAD, "pages/rates.py")
    app.selectbox(key="rates_level").set_value(level).run()
    assert not app.exception, app.exception
    table = rates_table(app)
    human = table[table["estimator"] == "weighted_human"].set_index("slice")
    assert set(human.index) == {"overall"} | {f"feature={f}" for f in FEATURES}
    assert human["rate"].notna().all(), human[["rate", "note"]].to_dict()
    assert (human["low"] <= human["rate"]).all() and (human["rate"] <= human["high"]).all()
    corrected = table[(table["estimator"] == "judge_corrected") & (table["slice"] == "overall")]
    assert corrected["rate"].notna().all(), corrected["note"].tolist()


def test_the_simulated_lead_leaves_a_few_disagreements_to_adjudicate(sample_store):
    store = open_store(sample_store)
    try:
        open_cases = disagreements(store, "demo", include_resolved=False)
        every_case = disagreements(store, "demo")
    finally:
        store.close()
    assert 0 < len(open_cases) < 10 < len(every_case)


def test_home_pace_says_when_there_is_none_yet_never_none(store_copy):
    store = open_store(store_copy)
    try:
        run_app(LEAD, None)  # makes lena's account
        assign(store, "demo", [LEAD.name], per_trace=1, assigned_by=LEAD.name)
    finally:
        store.close()
    app = run_app(LEAD, None)
    table = next(e.value for e in app.dataframe if "seconds per claim" in e.value.columns)
    row = table.set_index("reviewer").loc[LEAD.name]
    assert row["seconds per claim"] == NO_PACE and row["minutes left at this pace"] == NO_PACE
    assert "None" not in table.astype(str).to_string()
