"""`annotate claims list --sample NAME [--trace ID] [--json]`: each current claim's trace, index,
text, offsets and version, the indexes `import-labels` needs; and `annotate claims --extractor
llm` printing what its calls cost (its result on stdout, progress and messages on stderr)."""

from __future__ import annotations

import json

import pytest
from fake_anthropic import FakeAnthropic, message, start, stop
from rubric_data import prepare_rubric_store

from annotate.store import open_store


@pytest.fixture
def loop_db(db_path, tmp_path):
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=4)
    store.close()
    return db_path


def test_the_list_gives_what_import_labels_needs(loop_db, cli, tmp_path):
    listed = cli("claims", "list", "--sample", "loop", "--json")
    assert listed.code == 0, listed.err
    claims = listed.json()["claims"]
    assert [(c["trace_id"], c["claim_index"]) for c in claims[:3]] == [
        ("rt-000", 0), ("rt-000", 1), ("rt-001", 0)
    ]  # fmt: skip
    first = claims[1]
    assert first["text"] == "The amount due is $47."
    assert (first["start_offset"], first["end_offset"]) == (45, 67)
    assert first["version"] == "provided" and len(claims) == 8
    labels = tmp_path / "from_list.jsonl"
    rows = [{"trace_id": c["trace_id"], "claim": c["claim_index"], "reviewer": "cara",
             "label": "supported"} for c in claims]  # fmt: skip
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    imported = cli("import-labels", str(labels))
    assert imported.code == 0, imported.err


def test_one_trace_and_the_text_table(loop_db, cli):
    one = cli("claims", "list", "--sample", "loop", "--trace", "rt-002")
    assert one.code == 0 and one.err == ""
    lines = one.out.splitlines()
    assert lines[0] == "trace_id\tclaim_index\tstart\tend\tversion\ttext"
    assert lines[1:] == [
        "rt-002\t0\t0\t44\tprovided\tInvoice INV-1002 was issued by Acme Billing.",
        "rt-002\t1\t45\t67\tprovided\tThe amount due is $42.",
    ]


def test_a_trace_outside_the_sample_and_an_unknown_sample_are_usage_errors(loop_db, cli):
    wrong = cli("claims", "list", "--sample", "loop", "--trace", "nope")
    assert wrong.code == 2 and "trace 'nope' is not in sample 'loop'" in wrong.err
    assert cli("claims", "list", "--sample", "nowhere").code == 2
    assert cli("claims", "--sample", "loop", "--trace", "rt-000").code == 2


def test_llm_claims_print_their_spend_on_stdout_and_list_their_prompt_version(
    db_path, tmp_path, cli, monkeypatch
):
    path = tmp_path / "t.jsonl"
    row = {"trace_id": "x", "feature": "f", "response": "One. Two.", "context": ["One."]}
    path.write_text(json.dumps(row) + "\n")
    assert cli("import", str(path)).code == 0
    assert cli("sample", "--name", "s", "--n", "1", "--by", "feature", "--seed", "1").code == 0
    fake = FakeAnthropic()
    thread = start(fake)
    try:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        body = message('{"claims": [{"text": "One.", "quote": "One."}]}', 2000, 400)
        fake.reply(200, body)
        made = cli("claims", "--sample", "s", "--extractor", "llm")
    finally:
        stop(fake, thread)
    assert made.code == 0, made.err
    # claude-haiku-4-5 by default: $1 input, $5 output a million tokens
    assert made.out.splitlines() == [
        "s: 1 trace; 1 claim created (llm); 0 traces already had claims; 0 failed; "
        "0 still without claims",
        "spend: 1 call, 2,000 input, 400 output, 0 cache-read, 0 cache-write tokens, $0.0040",
    ]
    [claim] = cli("claims", "list", "--sample", "s", "--json").json()["claims"]
    assert claim["version"] == "claims-v3" and claim["text"] == "One."
