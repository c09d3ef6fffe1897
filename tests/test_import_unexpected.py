"""A bug costs one row, never the file; past a row, a bug is one line, an exit code and a log."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import plain, run_app

from annotate.accounts.users import User
from annotate.crash_log import EXIT_UNEXPECTED
from annotate.ingest import generic
from annotate.ingest.importer import import_traces
from annotate.ingest.inbox import set_import_folder
from annotate.store import imports as import_sql
from annotate.store import open_store
from annotate.traces import decoded
from annotate.traces import parse as traces


def write_rows(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def row(trace_id: str, **extra) -> dict:
    return {"trace_id": trace_id, "response": "r", "context": ["c"], **extra}


def boom(*_args, **_kwargs):
    raise RuntimeError("boom\nsecond line")


def test_an_exception_while_checking_one_row_is_that_rows_error(fresh_store, tmp_path, monkeypatch):
    parse = traces._FIELD_PARSERS["attributes"][1]

    def fragile(value, present):
        if value == {"trap": True}:
            raise KeyError("trap")
        return parse(value, present)

    monkeypatch.setitem(traces._FIELD_PARSERS, "attributes", ("attributes", fragile))
    monkeypatch.setattr(generic, "plain_trace", lambda raw, line: None)  # every row: parse.py
    path = write_rows(tmp_path / "t.jsonl", row("a"), row("b", attributes={"trap": True}), row("c"))
    report = import_traces(fresh_store, path)
    assert [str(e) for e in report.errors] == [
        "line 2: could not be checked: KeyError: 'trap'. The row was skipped; this is a bug in "
        "annotate, please report it with this row"
    ]
    assert report.imported == 2


def test_an_exception_on_the_decoded_path_sends_the_row_to_the_full_checks(
    fresh_store, tmp_path, monkeypatch
):
    monkeypatch.setattr(decoded, "_attributes", boom)
    path = write_rows(tmp_path / "t.jsonl", row("a"), row("b", attributes={"k": 1}), row("c"))
    report = import_traces(fresh_store, path)
    assert report.imported == 3 and not report.errors
    stored = fresh_store.fetchall("SELECT trace_id, attributes FROM traces ORDER BY trace_id")
    assert stored == [("a", "{}"), ("b", '{"k":1}'), ("c", "{}")]


def test_the_cli_turns_a_bug_into_one_line_exit_4_and_a_log(cli, tmp_path, monkeypatch):
    log = tmp_path / "errors.log"
    monkeypatch.setenv("ANNOTATE_LOG", str(log))
    monkeypatch.setattr(import_sql, "insert_tables", boom)
    result = cli("import", str(write_rows(tmp_path / "t.jsonl", row("a"))))
    assert result.code == EXIT_UNEXPECTED == 4
    assert result.err == (
        "error: annotate import failed unexpectedly (RuntimeError: boom second line); this is a "
        "bug in annotate. Nothing of it was stored (one transaction). Please report it; details "
        f"are in {log}\n"
    )
    logged = log.read_text()
    assert "Traceback (most recent call last)" in logged and "RuntimeError: boom" in logged


def test_the_log_goes_beside_the_store_by_default(cli, tmp_path, monkeypatch, db_path):
    monkeypatch.delenv("ANNOTATE_LOG", raising=False)
    monkeypatch.setattr(import_sql, "insert_tables", boom)
    result = cli("import", str(write_rows(tmp_path / "t.jsonl", row("a"))))
    assert result.code == 4
    assert result.err.rstrip().endswith(f"details are in {db_path.parent / 'annotate-errors.log'}")
    assert "RuntimeError: boom" in (db_path.parent / "annotate-errors.log").read_text()


def test_the_import_page_shows_a_bug_as_one_line_and_logs_it(tmp_path, monkeypatch):
    log = tmp_path / "page.log"
    monkeypatch.setenv("ANNOTATE_LOG", str(log))
    store = open_store(tmp_path / "app.duckdb")
    set_import_folder(store, str(tmp_path))
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "app.duckdb"))
    app = run_app(User("lena", "lead"), "pages/import_traces.py")
    monkeypatch.setattr(import_sql, "insert_tables", boom)
    app.text_input(key="import_path").input(str(write_rows(tmp_path / "t.jsonl", row("a"))))
    app.button(key="import_run").click().run()
    assert not app.exception
    assert [plain(e.value) for e in app.error] == [
        "The import failed unexpectedly (RuntimeError: boom second line); this is a bug in "
        "annotate. Nothing of it was stored (one transaction). Please report it; details are "
        f"in {log}"
    ]
    assert "RuntimeError: boom" in log.read_text()


def test_a_bug_on_one_otlp_trace_costs_that_trace_only(fresh_store, tmp_path, monkeypatch):
    import bad_corpus

    from annotate.ingest import otlp_calls

    candidates = otlp_calls._candidates

    def fragile(span, spans, views):
        if span.trace_id == "a2" * 16:
            raise ZeroDivisionError("division by zero")
        return candidates(span, spans, views)

    monkeypatch.setattr(otlp_calls, "_candidates", fragile)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(bad_corpus.otlp())
    report = import_traces(fresh_store, path)
    assert [str(e) for e in report.errors] == [
        "line 2: could not be checked: ZeroDivisionError: division by zero. The row was skipped; "
        "this is a bug in annotate, please report it with this row"
    ]
    assert report.imported == 1


def test_a_bug_in_a_command_that_commits_as_it_goes_does_not_say_nothing_was_stored(
    cli, db_path, tmp_path, monkeypatch
):
    """Caught: every command's bug said "Nothing of it was stored (one transaction)", true of
    an import but not of a judge run, whose verdicts commit as they arrive, nor of a command
    that stores nothing (verify-bundle)."""
    import annotate.cli.agreement as agreement_cli
    from annotate.store import open_store

    open_store(db_path).close()
    monkeypatch.setenv("ANNOTATE_LOG", str(tmp_path / "errors.log"))
    monkeypatch.setattr(agreement_cli, "mapping_rows", boom)
    result = cli("judge-labels")
    assert result.code == EXIT_UNEXPECTED
    assert "Nothing of it was stored" not in result.err
    assert "this is a bug in annotate. What it had not committed was rolled back." in result.err
