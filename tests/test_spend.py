"""Spend: what a run's calls actually used (input, output, cache-read and cache-write tokens) and
cost from the judge_prices setting, Message Batches at half price; printed at the end of
`annotate judge`, in its --json, in the activity log; `annotate spend` totals per sample and
rubric version. Every total is checked against llm_calls priced by hand here."""

from __future__ import annotations

import json

import pytest
from conftest import run_app, stored
from fake_anthropic import FakeAnthropic, start, stop
from rubric_compare_data import USAGE, answer
from rubric_data import prepare_rubric_store

from annotate.accounts.activity import activity
from annotate.accounts.users import User
from annotate.judge.rubrics.versions import edit_rubric
from annotate.store import open_store
from annotate.store.assignments import put_setting

MODEL = "claude-haiku-4-5"
# $2 input and $10 output a million tokens; cache reads $0.20 (0.1 x), writes $2.50 (1.25 x)
PRICE_IN, PRICE_OUT, PRICE_READ, PRICE_WRITE = 2.0, 10.0, 0.2, 2.5


@pytest.fixture
def fake(monkeypatch):
    server = FakeAnthropic()
    thread = start(server)
    server.responder, server.batch_polls = answer, 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    yield server
    stop(server, thread)


@pytest.fixture
def priced_db(db_path, tmp_path):
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=6)  # 12 labelled claims
    put_setting(store, "judge_prices", json.dumps({MODEL: [PRICE_IN, PRICE_OUT]}))
    store.close()
    return db_path


def by_hand(db_path, where: str = "TRUE") -> float:
    """Each call of llm_calls priced here: cache reads and writes at their prices, batch half."""
    rows = stored(
        db_path,
        "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
        f"batch_id IS NOT NULL FROM llm_calls WHERE {where}",
    )
    assert rows
    total = 0.0
    for tokens_in, tokens_out, read, write, batch in rows:
        usd = (tokens_in * PRICE_IN + tokens_out * PRICE_OUT + read * PRICE_READ
               + write * PRICE_WRITE) / 1e6  # fmt: skip
        total += usd / 2 if batch else usd
    return total


def test_a_runs_spend_is_its_calls_priced_with_cache_and_batch_prices(priced_db, fake, cli):
    sync = cli("judge", "--sample", "loop", "--json")
    assert sync.code == 0, sync.err
    spend = sync.json()["spend"]
    assert spend["calls"] == 12
    assert (spend["input_tokens"], spend["cache_read_tokens"], spend["cache_write_tokens"]) == (
        12 * USAGE["input_tokens"], 12 * USAGE["cache_read"], 12 * USAGE["cache_write"]
    )  # fmt: skip
    assert spend["usd"] == pytest.approx(by_hand(priced_db), rel=1e-9)
    store = open_store(priced_db)
    edit_rubric(store, 1, {"instructions": "Judge against the context only."}, "lena")
    store.close()
    batch = cli("judge", "--sample", "loop", "--rubric", "2", "--batch", "--poll-seconds", "0.01")
    assert batch.code == 0, batch.err
    usd = by_hand(priced_db, "batch_id IS NOT NULL")
    assert usd == pytest.approx(by_hand(priced_db, "batch_id IS NULL") / 2)
    assert (
        f"  spend: 12 calls, 3,720 input, 840 output, 10,800 cache-read, 480 cache-write tokens, ${usd:,.4f}"
        in batch.out
    )


def test_annotate_spend_totals_per_sample_and_version(priced_db, fake, cli):
    assert cli("judge", "--sample", "loop").code == 0
    report = cli("spend", "--json").json()
    assert report["total"]["usd"] == pytest.approx(by_hand(priced_db), rel=1e-9)
    [row] = report["rows"]
    assert (row["sample"], row["rubric_version"], row["purpose"], row["calls"]) == (
        "loop", 1, "judge", 12
    )  # fmt: skip
    assert row["usd"] == report["total"]["usd"]
    text = cli("spend", "--sample", "loop")
    assert text.code == 0 and "loop\trubric v1\tjudge\t12 calls" in text.out
    assert text.out.splitlines()[-1] == f"total: {text.out.splitlines()[0].split(chr(9))[-1]}"
    later = cli("spend", "--since", "2999-01-01", "--json").json()
    assert later["total"]["calls"] == 0 and later["rows"] == []
    assert cli("spend", "--since", "soon").code == 2


def test_four_prices_set_the_cache_prices_and_an_unpriced_model_is_named(priced_db, fake, cli):
    store = open_store(priced_db)
    put_setting(store, "judge_prices", json.dumps({MODEL: [2.0, 10.0, 1.0, 4.0]}))
    store.close()
    spend = cli("judge", "--sample", "loop", "--json").json()["spend"]
    expected = 12 * (310 * 2.0 + 70 * 10.0 + 900 * 1.0 + 40 * 4.0) / 1e6
    assert spend["usd"] == pytest.approx(expected, rel=1e-9)
    unpriced = cli("judge", "--sample", "loop", "--model", "claude-unpriced-1")
    assert "$0.0000 (no price for claude-unpriced-1 in judge_prices)" in unpriced.out
    total = cli("spend", "--json").json()["total"]
    assert total["unpriced_models"] == ["claude-unpriced-1"] and total["calls"] == 24
    assert total["usd"] == pytest.approx(expected, rel=1e-9)


def test_the_activity_log_holds_the_runs_spend(priced_db, fake, cli):
    spend = cli("judge", "--sample", "loop", "--json").json()["spend"]
    store = open_store(priced_db)
    try:
        [act] = activity(store, kind="judge_run")
    finally:
        store.close()
    detail = act["detail"] if isinstance(act["detail"], dict) else json.loads(act["detail"])
    assert detail["spend"]["usd"] == spend["usd"] and detail["spend"]["calls"] == 12


def test_the_rubric_page_shows_each_runs_spend(priced_db, fake, cli, monkeypatch):
    spend = cli("judge", "--sample", "loop", "--json").json()["spend"]
    assert cli("judge", "--sample", "loop", "--baseline").code == 0  # v1 too: no calls, $0
    usd = by_hand(priced_db)
    monkeypatch.setenv("ANNOTATE_DB", str(priced_db))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    assert not app.exception, app.exception
    runs = next(d.value for d in app.dataframe if "usd" in d.value.columns)
    assert list(runs["judge"]) == ["rubric-v1:offline-baseline", f"rubric-v1:{MODEL}"]
    assert list(runs["calls"]) == [0, 12] and runs["usd"].iloc[0] == 0
    assert runs["usd"].iloc[1] == pytest.approx(spend["usd"]) == pytest.approx(usd)
    assert runs["cache_read_tokens"].iloc[1] == 12 * USAGE["cache_read"]
