"""The `annotate` command: exit codes, the --json contracts, --db / ANNOTATE_DB, the lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

GOOD = FIXTURES / "generic" / "production.jsonl"
BAD = FIXTURES / "bad"


def test_clean_import_exits_0_with_the_json_contract(cli):
    result = cli("import", str(GOOD), "--json")
    assert result.code == 0
    assert result.json() == {
        "imported": 3,
        "rejected": 0,
        "duplicates": 0,
        "conflicts": 0,
        "attached": 0,
        "context_from": {"file": 2, "none": 1},
        "errors": [],
        "warnings": [],
    }
    assert "imported 3, rejected 0" in result.err
    assert "context from: file 2, none 1" in result.err


def test_reimport_imports_nothing_twice_and_still_exits_0(cli):
    cli("import", str(GOOD))
    again = cli("import", str(GOOD), "--json")
    assert again.code == 0
    assert again.json()["imported"] == 0 and again.json()["duplicates"] == 3
    assert cli("status", "--json").json()["traces"] == 3


def test_conflict_with_an_earlier_import_is_reported_and_not_overwritten(cli, tmp_path):
    cli("import", str(GOOD))
    changed = tmp_path / "changed.jsonl"
    changed.write_text('{"trace_id": "t-2", "response": "You get 30 days.", "context": ["x"]}\n')
    result = cli("import", str(changed), "--json")
    assert result.code == 1
    assert result.json()["conflicts"] == 1
    assert result.json()["errors"] == [
        {
            "line": 1,
            "field": "trace_id",
            "message": "'t-2' was already imported by import 1 (line 2 of that file) with different "
            "content; the first was kept. Give this trace a new trace_id if it is a different trace",
        }
    ]
    status = cli("status", "--json").json()
    assert status["traces"] == 3


def test_rejected_rows_exit_1_and_at_most_20_are_printed(cli, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(f'{{"trace_id": "x-{i}", "context": []}}\n' for i in range(25)))
    result = cli("import", str(path), "--json")
    assert result.code == 1
    assert len(result.json()["errors"]) == 25
    printed = [line for line in result.err.splitlines() if line.startswith("  line ")]
    assert len(printed) == 20
    assert "see `annotate errors 1`" in result.err
    listed = cli("errors", "1", "--json").json()["errors"]
    assert [e["line"] for e in listed] == list(range(1, 26))


def test_usage_errors_exit_2(cli, tmp_path):
    assert cli("import", str(tmp_path / "missing.jsonl")).code == 2
    empty = cli("import", str(BAD / "empty.jsonl"))
    assert empty.code == 2 and "is empty: there is nothing to import" in empty.err
    assert cli("import", str(BAD / "binary.bin")).code == 2
    assert cli("import", str(GOOD), "--map", "nonsense").code == 2


def test_argparse_errors_exit_2(cli):
    result = cli("import")
    assert result.code == 2 and "the following arguments are required: path" in result.err


def test_status_json_contract(cli):
    cli("import", str(GOOD))
    status = cli("status", "--json").json()
    assert {
        k: status[k] for k in ("traces", "judgeable", "claims", "judge_verdicts", "label_events")
    } == {
        "traces": 3,
        "judgeable": 2,
        "claims": 2,
        "judge_verdicts": 3,
        "label_events": 0,
    }
    assert status["by_feature"] == {"billing_qa": 1, "code_assistant": 1, "hr_policy": 1}
    assert status["by_risk_category"] == {"financial": 1, "legal": 1, "security": 1}
    assert status["by_model"] == {"m-1": 2, "m-2": 1}
    assert [
        {k: i[k] for k in ("id", "path", "imported", "rejected")} for i in status["imports"]
    ] == [{"id": 1, "path": str(GOOD), "imported": 3, "rejected": 0}]


def test_annotate_db_environment_variable_picks_the_file(cli, tmp_path, monkeypatch):
    target = tmp_path / "from_env.duckdb"
    monkeypatch.setenv("ANNOTATE_DB", str(target))
    assert cli("import", str(GOOD), db=None).code == 0
    assert target.exists()
    assert cli("status", "--json", db=target).json()["traces"] == 3


def test_init_loads_a_sample_only_into_an_empty_store(cli):
    first = cli("init", "--sample", str(GOOD))
    assert first.code == 0 and "loaded 3 sample traces" in first.err
    second = cli("init", "--sample", str(GOOD))
    assert "ready (3 traces)" in second.err
    assert len(cli("status", "--json").json()["imports"]) == 1


def test_init_counts_the_sample_traces_it_loaded_in_the_number_they_take(cli, tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text(GOOD.read_text().splitlines(keepends=True)[0])
    result = cli("init", "--sample", str(one))
    assert result.code == 0 and f"loaded 1 sample trace from {one}" in result.err


def _hold_the_store(db: Path) -> subprocess.Popen[str]:
    code = (
        "import sys, time\n"
        "from annotate.store import open_store\n"
        f"store = open_store({str(db)!r})\n"
        "print('holding', flush=True)\n"
        "time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


def test_a_write_while_another_process_holds_the_file_exits_3_naming_it(db_path):
    holder = _hold_the_store(db_path)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "annotate.cli", "import", str(GOOD), "--db", str(db_path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,  # a lock must fail at once, never wait
        )
    finally:
        holder.send_signal(signal.SIGTERM)
        holder.wait(timeout=10)
    assert result.returncode == 3
    assert f"PID {holder.pid}" in result.stderr
    assert "from annotate.store import open_store" in result.stderr  # the holder's command line
    assert "Stop that process" in result.stderr and "Import page" in result.stderr
    assert os.path.exists(db_path)


def test_a_data_file_given_as_the_store_is_refused_and_left_as_it_was(cli, tmp_path):
    """Catches --db naming a CSV, JSON Lines or Parquet file: DuckDB opened it as an in-memory
    view, so `import` said it imported 120 rows and kept none of them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv, jsonl, parquet = tmp_path / "t.csv", tmp_path / "t.jsonl", tmp_path / "t.parquet"
    csv.write_text("a,b\n1,2\n")
    jsonl.write_bytes(GOOD.read_bytes())
    pq.write_table(pa.table({"a": [1]}), parquet)
    for data in (csv, jsonl, parquet):
        before = data.read_bytes()
        result = cli("import", str(GOOD), db=data)
        assert result.code == 2, result.err
        assert f"{data} is a data file, not a DuckDB store" in result.err
        assert data.read_bytes() == before
    assert cli("import", str(GOOD), db=tmp_path / "new.csv").code == 0  # a new file: a store


def test_an_out_path_that_cannot_be_written_is_a_usage_error_before_any_work(cli, tmp_path):
    """Catches --out naming a folder, a missing folder or, for a report, a file: each ended
    in an unexpected error (exit 4) after the work was done, and a report's act was recorded."""
    assert cli("import", str(GOOD)).code == 0
    folder = tmp_path / "out"
    folder.mkdir()
    taken = tmp_path / "taken.txt"
    taken.write_text("x")
    cases = [
        (("export-rates", "--sample", "s", "--out", str(folder)), "is a folder"),
        (("export-rates", "--sample", "s", "--out", str(tmp_path / "no/x.csv")), "create it"),
        (("export-otel", "--sample", "s", "--out", str(folder)), "is a folder"),
        (("bundle", "--sample", "s", "--out", str(folder)), "is a folder"),
        (("rubric", "export", "1", "--out", str(tmp_path / "no/r.yaml")), "create it first"),
        (("report", "--out", str(taken)), "is a file; give a folder"),
        (("demo-data", "--out", str(taken)), "is a file; give a folder"),
    ]
    for args, message in cases:
        result = cli(*args)
        assert result.code == 2 and message in result.err, (args, result.err)
    kinds = {act["kind"] for act in cli("activity", "--json").json()["activity"]}
    assert "import" in kinds and "report" not in kinds


def test_numbers_out_of_range_are_usage_errors_that_say_the_range(cli):
    """Catches a seed, resample count, limit or threshold that ended in an unexpected error
    (IndexError, MemoryError, a DuckDB conversion error; exit 4 or 1) or was saved as given."""
    assert cli("import", str(GOOD)).code == 0
    cases = [
        (("agreement", "--seed", "-1"), "a seed must be from 0 to 9,223,372,036,854,775,807"),
        (("agreement", "--resamples", "0"), "resamples must be from 50 to 100,000, got 0"),
        (("calibration", "--judge", "j", "--resamples", "99999999999"), "must be from 50"),
        (("rates", "--sample", "s", "--resamples", "-1"), "must be from 50 to 100,000"),
        (("sample", "--name", "s", "--n", "2", "--seed", "9" * 23), "a seed must be from 0"),
        (("activity", "--limit", "-1"), "the number of rows must be from 1 to 1,000,000"),
        (("activity", "--limit", "x"), "must be a whole number, got 'x'"),
        (("rates", "--sample", "s", "--threshold", "2"), "the threshold must be between 0 and 1"),
        (("calibration", "--judge", "j", "--min-sensitivity", "-1"), "between 0 and 1, got -1"),
    ]
    for args, message in cases:
        result = cli(*args)
        assert result.code == 2 and message in result.err, (args, result.code, result.err)
    assert cli("activity", "--limit", "1", "--json").code == 0


def test_a_canary_rule_past_what_a_number_can_be_written_with_is_refused():
    """Catches scale:1e308 ending in decimal.InvalidOperation (exit 4) while writing numbers."""
    import pytest

    from annotate.canary.rules import parse_rule
    from annotate.errors import UsageError

    for text in ("scale:1e308", "scale:0.0000001", "shift:1e12", "scale:1", "shift:0"):
        with pytest.raises(UsageError, match="is not a rule"):
            parse_rule(text)
    assert str(parse_rule("scale:1000")) == "scale:1000"


def test_an_unknown_import_an_empty_path_and_a_map_to_no_field_are_usage_errors(cli):
    """Catches `errors 999` printing nothing with exit 0, `import ""` naming ".", and --map
    onto a name that is no trace field (it moved `response` out of every row) or onto one
    field twice (the last won)."""
    assert cli("init", "--no-sample").code == 0
    assert cli("errors", "1").code == 2 and "nothing was imported yet" in cli("errors", "1").err
    assert cli("import", str(GOOD)).code == 0
    missing = cli("errors", "999")
    assert missing.code == 2 and "no import 999; the imports are numbered 1 to 1" in missing.err
    assert cli("errors", "1").code == 0
    empty = cli("import", "")
    assert empty.code == 2 and "give the file to import" in empty.err
    bogus = cli("import", str(GOOD), "--map", "bogus=response")
    assert bogus.code == 2 and "'bogus' is not a trace field; map to one of trace_id" in bogus.err
    twice = cli("import", str(GOOD), "--map", "response=a", "--map", "response=b")
    assert twice.code == 2 and "--map names 'response' twice" in twice.err


def test_an_empty_as_and_a_column_given_twice_are_usage_errors(cli):
    """Catches `--as ""` acting as the OS user and `--by feature,feature` stored as given."""
    assert cli("import", str(GOOD)).code == 0
    blank = cli("status", "--as", "")
    assert blank.code == 2 and "--as needs an account name" in blank.err
    twice = cli("sample", "--name", "s", "--n", "2", "--by", "feature,feature")
    assert twice.code == 2 and "--by names feature twice" in twice.err


def test_flags_a_command_would_ignore_are_refused(cli, tmp_path):
    """Catches `sample --top-up 5 --n 100 --seed 99` drawing with the sample's own seed while
    the user believed theirs was used, and `init --sample x --no-sample` loading nothing."""
    from tests.bench.synthetic import write_jsonl

    write_jsonl(tmp_path / "traces.jsonl", 40)
    assert cli("import", str(tmp_path / "traces.jsonl")).code == 0
    first = cli("sample", "--name", "s", "--n", "10", "--by", "feature")
    assert first.code == 0, first.err
    mixed = cli("sample", "--name", "s", "--top-up", "1", "--n", "100", "--seed", "99")
    assert mixed.code == 2
    assert "--top-up grows 's' as it was drawn" in mixed.err and "--n, --seed" in mixed.err
    assert cli("sample", "--name", "s", "--top-up", "1").code == 0
    too_many = cli("sample", "--name", "s", "--top-up", "5000")
    assert too_many.code == 2 and "'s' has 29 traces of its frame not yet drawn" in too_many.err
    taken = cli("sample", "--name", "s", "--n", "5", "--plan-only")  # refused at plan time
    assert taken.code == 2 and "a sample named 's' exists" in taken.err
    both = cli("init", "--sample", str(GOOD), "--no-sample")
    assert both.code == 2 and "give one of them" in both.err


def test_a_command_that_only_reads_refuses_a_store_that_does_not_exist(cli, tmp_path):
    """Catches `status --db <typo>` quietly making an empty store at the typo and saying
    "0 traces", as if the data were gone."""
    typo = tmp_path / "anotate.duckdb"
    for args in (["status"], ["samples"], ["agreement"], ["user", "list"], ["activity"]):
        result = cli(*args, "--db", str(typo), db=None)
        assert result.code == 2, (args, result.err)
        assert f"no store at {typo}" in result.err and "annotate init" in result.err
    assert not typo.exists()
    assert cli("init", "--no-sample", "--db", str(typo), db=None).code == 0
    assert cli("status", "--db", str(typo), db=None).code == 0


def test_a_reader_that_leaves_early_ends_the_command_quietly(cli, db_path):
    """Catches `annotate activity | head` reported as a bug (exit 4, a traceback logged)."""
    import subprocess
    import sys

    assert cli("init").code == 0  # the bundled sample: the activity list is ~45 KB
    command = [sys.executable, "-m", "annotate.cli", "activity", "--db", str(db_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader is gone before the first line is written
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141, err  # 128 + SIGPIPE, as a shell reports it
    assert err.decode() == ""
    assert not (db_path.parent / "annotate-errors.log").exists()


def test_ctrl_c_ends_a_command_with_130_and_no_bug_report(cli, db_path, monkeypatch):
    """Catches Ctrl-C during an import printed as a traceback, or as "failed unexpectedly
    (RuntimeError: Query interrupted); this is a bug" with a logged crash (exit 4)."""
    from annotate.cli import imports

    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(imports, "import_traces", pressed)
    result = cli("import", str(GOOD))
    assert result.code == 130 and result.err.startswith("interrupted: the step in progress")
    assert not (db_path.parent / "annotate-errors.log").exists()


def test_a_query_interrupted_in_duckdb_is_an_interruption_not_a_store_failure(fresh_store):
    import threading

    from annotate.errors import Interrupted

    timer = threading.Timer(0.3, fresh_store.conn.interrupt)  # what Ctrl-C does to DuckDB
    timer.start()
    try:
        with pytest.raises(Interrupted, match="interrupted; the step in progress was rolled"):
            fresh_store.scalar("SELECT count(*) FROM range(1000000000000) a")
    finally:
        timer.cancel()


def test_a_missing_or_empty_input_file_makes_no_store(cli, tmp_path):
    """Catches `annotate import typo.jsonl --db new.duckdb` leaving a new empty store behind
    although the README says nothing is recorded."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for command, path in (
        ("import", tmp_path / "typo.jsonl"),
        ("import", empty),
        ("import-labels", tmp_path / "typo.jsonl"),
    ):
        store = tmp_path / "new.duckdb"
        result = cli(command, str(path), "--db", str(store), db=None)
        assert result.code == 2, (command, result.err)
        assert "does not exist" in result.err or "is empty" in result.err
        assert not store.exists(), command


def test_a_file_that_looks_empty_in_the_format_given_says_so(cli, tmp_path):
    """Catches "holds no rows: there is nothing to import" for a JSONL file forced to be read
    as CSV (its line taken as a header): the file is not empty, the --format is wrong."""
    path = tmp_path / "traces.jsonl"
    path.write_text("hello world\n")
    forced = cli("import", str(path), "--format", "csv")
    assert forced.code == 2
    assert "holds no rows when read as csv, the format given; leave --format out" in forced.err
    empty = tmp_path / "empty.csv"
    empty.write_text("trace_id,response,context\n")
    plain = cli("import", str(empty))
    assert plain.code == 2 and "holds no rows: there is nothing to import" in plain.err


def test_a_file_that_cannot_be_imported_leaves_no_new_store_behind(cli, tmp_path):
    """Catches `import binary.jsonl --db new.duckdb` exiting 2 with an empty store left at
    new.duckdb: the next command then read an empty store instead of saying "no store"."""
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    words = tmp_path / "words.txt"
    words.write_text("just some words\nand more\n")
    for path in (binary, words):
        new = tmp_path / f"new-{path.stem}.duckdb"
        assert cli("import", str(path), db=new).code == 2
        assert not new.exists() and not new.with_name(new.name + ".wal").exists()
    kept = tmp_path / "kept.duckdb"  # a store that was there before is never removed
    assert cli("init", "--no-sample", db=kept).code == 0
    assert cli("import", str(binary), db=kept).code == 2 and kept.exists()
    rejected = tmp_path / "rejected.jsonl"  # rejected rows are an outcome: their errors stay
    rejected.write_text('{"trace_id": "a"}\n')
    made = tmp_path / "made.duckdb"
    assert cli("import", str(rejected), db=made).code == 1 and made.exists()
    assert "line 1" in cli("errors", "1", db=made).out
