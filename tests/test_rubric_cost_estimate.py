"""A judge model missing from the price table: the dry run and the Rubric page say the cost is
unknown and why, never "$None"."""

# ruff: noqa: F811 - the fake_anthropic fixture is imported by name
from __future__ import annotations

import pytest
from conftest import plain, run_app
from fake_anthropic import fake_anthropic  # noqa: F401 - the fixture
from rubric_data import prepare_rubric_store

from annotate.accounts.users import User
from annotate.judge.rubrics.versions import edit_rubric, make_current
from annotate.store import open_store

UNPRICED = "claude-unpriced-9"
UNKNOWN = f"cost unknown (no price for '{UNPRICED}' in the judge_prices setting)"


@pytest.fixture
def loop_db(db_path, tmp_path):
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=6)
    store.close()
    return db_path


def test_the_dry_run_says_the_cost_is_unknown_for_a_model_without_a_price(
    loop_db, cli, fake_anthropic, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    result = cli("judge", "--sample", "loop", "--model", UNPRICED, "--dry-run")
    assert result.code == 0, result.err
    assert UNKNOWN in result.out and "$None" not in result.out
    priced = cli("judge", "--sample", "loop", "--model", "claude-haiku-4-5", "--dry-run")
    assert "output tokens, $0." in priced.out and "cost unknown" not in priced.out
    assert fake_anthropic.requests == []


def test_the_rubric_page_says_the_cost_is_unknown_for_a_model_without_a_price(loop_db, monkeypatch):
    store = open_store(loop_db)
    make_current(store, edit_rubric(store, 1, {"model": UNPRICED}, "lena").version, "lena")
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(loop_db))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    captions = [plain(c.value) for c in app.caption]
    assert any(UNKNOWN in c for c in captions), captions
    assert not any("$None" in c for c in captions)
