"""`annotate rubric propose` prints the model's rationale, the diff of the draft against its
parent and what the call cost; with no few-shot candidates its answer schema has no picks, and
picks anyway are refused in words (not "candidate numbers 0..-1")."""

from __future__ import annotations

import json

import pytest
from fake_anthropic import FakeAnthropic, message, start, stop
from rubric_data import prepare_rubric_store

from annotate.store import open_store

INSTRUCTIONS = "Compare every amount.\nA number that differs is contradicted."


@pytest.fixture
def fake(monkeypatch):
    server = FakeAnthropic()
    thread = start(server)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    yield server
    stop(server, thread)


@pytest.fixture
def missing_db(db_path, tmp_path, cli):
    """The baseline judge made to miss every wrong amount; no adjudication, so no candidate."""
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=30)
    store.close()
    assert cli("judge", "--sample", "loop", "--baseline").code == 0
    store = open_store(db_path)
    store.execute("UPDATE judge_verdicts SET label = 'supported'")
    store.close()
    return db_path


def propose(cli, *extra: str):
    return cli("rubric", "propose", "1", "--sample", "loop", "--model", "offline-baseline", *extra)


def test_propose_prints_its_rationale_the_diff_and_the_spend(missing_db, fake, cli):
    body = {"rationale": "It missed 6 wrong amounts.", "instructions": INSTRUCTIONS}
    fake.reply(200, message(json.dumps(body), 1000, 200))
    done = propose(cli)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0].startswith("draft rubric v2 (parent v1): proposed by claude-haiku-4-5")
    assert lines[1] == "rationale: It missed 6 wrong amounts."
    assert lines[2:4] == ["--- v1", "+++ v2"]
    assert (
        "+  Compare every amount." in lines and "+  A number that differs is contradicted." in lines
    )
    assert any(line.startswith("-  Judge each claim against the context only") for line in lines)
    # claude-haiku-4-5 by default: $1 input, $5 output a million tokens
    assert (
        lines[-1]
        == "spend: 1 call, 1,000 input, 200 output, 0 cache-read, 0 cache-write tokens, $0.0020"
    )
    [request] = fake.message_requests()
    schema = request["output_config"]["format"]["schema"]
    assert "few_shot" not in schema["properties"] and "few_shot" not in schema["required"]


def test_the_json_holds_rationale_diff_and_spend(missing_db, fake, cli):
    body = {"rationale": "amounts", "instructions": INSTRUCTIONS}
    fake.reply(200, message(json.dumps(body), 1000, 200))
    document = propose(cli, "--json").json()
    assert (document["version"], document["parent"], document["candidates"]) == (2, 1, 0)
    assert document["rationale"] == "amounts" and "+  Compare every amount." in document["diff"]
    assert document["spend"]["usd"] == pytest.approx((1000 * 1.0 + 200 * 5.0) / 1e6)


def test_picks_with_no_candidates_are_refused_in_words(missing_db, fake, cli):
    body = {"rationale": "amounts", "instructions": INSTRUCTIONS, "few_shot": [0]}
    fake.reply(200, message(json.dumps(body)))
    failed = propose(cli)
    assert failed.code == 1
    assert "there were no candidates to pick" in failed.err and "0..-1" not in failed.err
