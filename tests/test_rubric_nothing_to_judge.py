"""`annotate judge` on a sample with no labelled claim says why nothing was judged and what to
do, and exits 0 (no key is needed to find that out)."""

from __future__ import annotations

import json

import pytest
from rubric_data import trace_rows

from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store

HINT = "nothing to judge: sample 'loop' has no labelled claim yet"


@pytest.fixture
def unlabelled_db(db_path, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in trace_rows(6)))
    store = open_store(db_path)
    import_traces(store, traces)
    draw_sample(store, SampleSpec(name="loop", n=6, by=("feature",), seed=1))
    store.close()
    return db_path


def test_a_sample_without_labels_says_label_first_or_all_claims(unlabelled_db, cli):
    done = cli("judge", "--sample", "loop", "--baseline")
    assert done.code == 0, done.err
    assert HINT in done.out and "--all-claims" in done.out and "Label page" in done.out


def test_only_the_explanation_is_printed_not_a_report_of_zeros(unlabelled_db, cli):
    for flags in ((), ("--dry-run",)):
        done = cli("judge", "--sample", "loop", "--baseline", *flags)
        assert done.code == 0, done.err
        [line] = done.out.splitlines()
        assert line.startswith(HINT) and "done: 0 verdicts" not in done.out
        assert done.err == ""


def test_the_llm_judge_needs_no_key_to_say_there_is_nothing_to_judge(unlabelled_db, cli):
    done = cli("judge", "--sample", "loop")
    assert done.code == 0, done.err
    assert HINT in done.out
    assert cli("status", "--json").json()["judge_verdicts"] == 0


def test_with_json_the_hint_goes_to_stderr_and_stdout_stays_one_document(unlabelled_db, cli):
    done = cli("judge", "--sample", "loop", "--baseline", "--json")
    assert done.code == 0 and done.json()["claims"] == 0
    assert HINT in done.err


def test_all_claims_judges_the_unlabelled_claims_without_a_hint(unlabelled_db, cli):
    done = cli("judge", "--sample", "loop", "--baseline", "--all-claims", "--json")
    assert done.code == 0 and done.json()["judged"] == 12
    assert "nothing to judge" not in done.err
