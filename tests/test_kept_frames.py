"""The Rates frame kept in the store for the next process (annotate.store.kept_frames): a fresh
process reads the frame an earlier one computed, the same to the last value and type, while
nothing it depends on moved; anything that moves the frame mark, or another query, computes it
again; a store that takes no write still gets its frame; the table stays small."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pandas as pd
import pytest
from conftest import ROOT
from rates_data import JUDGE, make_store

from annotate.rates import inputs as rate_inputs
from annotate.rates.inputs import load_inputs
from annotate.store import kept_frames, open_store


@pytest.fixture
def store_path(tmp_path):
    return make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}, sample_n=40, attributes=True)


@pytest.fixture
def reads(monkeypatch):
    """Each query of the frame over the store (what a kept frame spares)."""
    found: list[int] = []
    real = rate_inputs.sql.frame_table
    monkeypatch.setattr(rate_inputs.sql, "frame_table", lambda *a: found.append(1) or real(*a))
    return found


def new_process() -> None:
    """What a fresh process has: none of this process's recent frames."""
    rate_inputs._RECENT_FRAMES.clear()


def kept(store) -> int:
    return store.scalar("SELECT count(*) FROM kept_frames")


@pytest.mark.parametrize("by", [["feature"], ["retriever", "model"], []])
def test_a_new_process_reads_the_kept_frame_the_same_to_the_last_type(store_path, reads, by):
    store = open_store(store_path)
    first = load_inputs(store, "main", by, JUDGE).frame
    assert len(reads) == 1 and kept(store) == 1
    new_process()
    again = load_inputs(store, "main", by, JUDGE).frame
    assert len(reads) == 1  # read from the store, not computed
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    store.close()


def test_a_new_label_keeps_the_frame_and_an_import_or_a_mapping_moves_it(
    store_path, reads, tmp_path
):
    from annotate.accounts.users import add_user
    from annotate.ingest.importer import import_traces
    from annotate.judge.labels import set_label
    from annotate.labelling.assignment import assign
    from annotate.labelling.session import next_claim, record_verdict

    store = open_store(store_path)
    load_inputs(store, "main", ["feature"], JUDGE)
    add_user(store, "ruth", "reviewer", "test passphrase")
    assign(store, "main", ["ruth"], per_trace=1)
    reads.clear()
    record_verdict(store, "ruth", next_claim(store, "ruth", "main"), "contradicted")
    new_process()
    load_inputs(store, "main", ["feature"], JUDGE)
    assert len(reads) == 1  # the assignment (an act) moved the mark; the verdict did not
    new_process()
    record_verdict(store, "ruth", next_claim(store, "ruth", "main"), "supported")
    load_inputs(store, "main", ["feature"], JUDGE)
    assert len(reads) == 1
    set_label(store, JUDGE, "unsupported", "supported", actor="lena")
    new_process()
    remapped = load_inputs(store, "main", ["feature"], JUDGE).frame
    assert len(reads) == 2 and int(remapped["jcu"].sum()) == 0  # not the stale frame
    row = {"trace_id": "late-1", "feature": "billing_qa", "response": "r", "context": ["c"],
           "judge": [{"judge": JUDGE, "level": "response", "label": "unsupported"}]}  # fmt: skip
    (tmp_path / "late.jsonl").write_text(json.dumps(row) + "\n")
    import_traces(store, tmp_path / "late.jsonl")
    new_process()
    grown = load_inputs(store, "main", ["feature"], JUDGE).frame
    assert len(reads) == 3 and int(grown["traces"].sum()) == int(remapped["traces"].sum())
    store.close()  # the sample's frame stops at its import: the late trace is not in it


def test_another_query_text_misses_the_kept_frame(store_path, reads, monkeypatch):
    """A new version of annotate whose frame query differs computes its own frame."""
    store = open_store(store_path)
    load_inputs(store, "main", ["feature"], JUDGE)
    real = kept_frames.sql.frame_statement
    monkeypatch.setattr(
        kept_frames.sql, "frame_statement", lambda *a: (real(*a)[0] + " ", real(*a)[1])
    )
    new_process()
    load_inputs(store, "main", ["feature"], JUDGE)
    assert len(reads) == 2 and kept(store) == 2
    store.close()


def test_a_read_only_store_gets_its_frame_and_keeps_nothing(store_path, reads):
    store = open_store(store_path, read_only=True)
    first = load_inputs(store, "main", ["feature"], JUDGE).frame
    new_process()
    again = load_inputs(store, "main", ["feature"], JUDGE).frame
    assert len(reads) == 2 and again.equals(first) and kept(store) == 0
    store.close()


def test_two_sessions_keeping_the_same_frame_at_once_both_get_it(store_path, monkeypatch):
    store = open_store(store_path)
    real = rate_inputs.sql.frame_table
    both = threading.Barrier(2)

    def together(*args):
        frame = real(*args)
        both.wait(10)  # both computed; both keep now
        return frame

    monkeypatch.setattr(rate_inputs.sql, "frame_table", together)
    query = rate_inputs._frame_query(store, "main", ["feature"], JUDGE)
    mark = ("m",)
    found: list[pd.DataFrame] = []

    def keep(cursor) -> None:
        found.append(kept_frames.kept_frame_table(cursor, mark, query.args))

    threads = [threading.Thread(target=keep, args=(store.session(),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(found) == 2 and found[0].equals(found[1]) and kept(store) == 1
    store.close()


def test_only_the_newest_frames_are_kept(store_path):
    store = open_store(store_path)
    query = rate_inputs._frame_query(store, "main", ["feature"], JUDGE)
    for number in range(kept_frames.KEEP + 3):
        kept_frames.kept_frame_table(store, (number,), query.args)
    assert kept(store) == kept_frames.KEEP
    newest = kept_frames.frame_key((kept_frames.KEEP + 2,), query.args)
    assert store.scalar("SELECT count(*) FROM kept_frames WHERE key = ?", [newest]) == 1
    store.close()


def test_a_second_command_reads_the_frame_the_first_kept(store_path):
    """Each command is a fresh interpreter: `annotate rates` twice on the same store, the second
    prints the same document from the frame the first kept."""
    code = (
        "import sys\n"
        "from annotate.rates import inputs\n"
        "real = inputs.sql.frame_table\n"
        "def counted(*a):\n"
        "    print('FRAME QUERY', file=sys.stderr)\n"
        "    return real(*a)\n"
        "inputs.sql.frame_table = counted\n"
        "from annotate.cli.main import main\n"
        "sys.exit(main(['rates', '--sample', 'main', '--by', 'feature', '--json', '--resamples', '50', "
        "'--db', sys.argv[1]]))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(store_path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )  # fmt: skip
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-2000:]
    assert [r.stderr.count("FRAME QUERY") for r in runs] == [1, 0]
    assert runs[0].stdout == runs[1].stdout and json.loads(runs[0].stdout)
