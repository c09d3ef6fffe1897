"""The bad-input corpus through the CLI and the Import page: no traceback anywhere, each bad
row reported with its line and field, every good row stored, exit codes as documented.

Run with `-s` to see the table (kind, exit code, reported line, good rows kept)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bad_corpus import TRACES_FOR_LABELS, Kind, kinds
from conftest import run_app

from annotate.accounts.users import User
from annotate.ingest.importer import ImportReport, import_traces
from annotate.ingest.inbox import set_import_folder
from annotate.store import open_store

KINDS = kinds()
LEAD = User("lena", "lead")


def test_the_corpus_has_at_least_40_kinds():
    assert len({kind.name for kind in KINDS}) == len(KINDS) >= 40


def prepare(tmp_path: Path, kind: Kind, index: int, prefix: str) -> tuple[Path, Path]:
    path = tmp_path / f"{prefix}{index}.{kind.suffix}"
    path.write_bytes(kind.data())
    db = tmp_path / f"{prefix}{index}.duckdb"
    store = open_store(db)
    if kind.route == "labels":
        seed = tmp_path / f"{prefix}{index}-traces.jsonl"
        seed.write_bytes(TRACES_FOR_LABELS)
        import_traces(store, seed)
    set_import_folder(store, str(tmp_path))  # the Import page reads files only from there
    store.close()
    return path, db


def kept_in(db: Path, kind: Kind) -> set[str]:
    store = open_store(db)
    try:
        if kind.route == "labels":
            rows = store.fetchall(
                "SELECT DISTINCT reviewer FROM label_events WHERE origin = 'import'"
            )
        else:
            rows = store.fetchall("SELECT trace_id FROM traces")
    finally:
        store.close()
    return {row[0] for row in rows}


def first_reported(document: dict, kind: Kind) -> tuple[int | None, str | None]:
    found = document["warnings"] if kind.warns else document["errors"]
    return (found[0]["line"], found[0]["field"]) if found else (None, None)


def print_table(title: str, rows: list[tuple[str, int, object, str]]) -> None:
    print(f"\n{title}\n{'kind':<44} {'exit':>4} {'line':>5}  good rows kept")
    for name, code, where, kept in rows:
        print(f"{name:<44} {code:>4} {where if where is not None else '-':>5}  {kept}")


def test_every_kind_through_the_cli(cli, tmp_path):
    table = []
    for index, kind in enumerate(KINDS):
        path, db = prepare(tmp_path, kind, index, "cli")
        command = "import-labels" if kind.route == "labels" else "import"
        result = cli(command, str(path), "--json", db=db)
        assert "Traceback" not in result.err, (kind.name, result.err)
        assert result.code == kind.exit, (kind.name, result.err)
        if kind.line is None:
            line, field = None, None
            assert len(result.err.strip().splitlines()) == 1, (kind.name, result.err)
        else:
            line, field = first_reported(result.json(), kind)
        assert (line, field) == (kind.line, kind.field), (kind.name, result.err)
        kept = kept_in(db, kind) if db.exists() else set()
        assert kept == {name.format(stem=path.stem) for name in kind.kept}, kind.name
        table.append((kind.name, result.code, line, str(len(kept))))
    print_table("bad-input corpus through `annotate import`", table)


def import_on_page(app, path: Path, route: str):
    """Drive the Import page's widgets by key: a file in the import folder, by path."""
    app.radio(key="import_kind").set_value(route)
    app.text_input(key="import_path").input(str(path))
    app.button(key="import_run").click().run()
    return app


def report_of(app) -> ImportReport | None:
    try:
        return app.session_state["import_report"]
    except KeyError:  # the file was refused: no report
        return None


def page_exit(app, report: ImportReport | None) -> int:
    if report is None:
        assert len(app.error) == 1, [e.value for e in app.error]
        return 2
    return 0 if report.is_clean else 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_every_kind_through_the_import_page(tmp_path, monkeypatch):
    table = []
    for index, kind in enumerate(KINDS):
        path, db = prepare(tmp_path, kind, index, "page")
        monkeypatch.setenv("ANNOTATE_DB", str(db))
        app = run_app(LEAD, "pages/import_traces.py")  # signed in on this store
        import_on_page(app, path, kind.route)
        assert not app.exception, (kind.name, app.exception)
        report = report_of(app)
        code = page_exit(app, report)
        assert code == kind.exit, kind.name
        line = None
        if report is not None and kind.line is not None:
            line, field = first_reported(report.as_json(), kind)
            assert (line, field) == (kind.line, kind.field), kind.name
        imported = report.imported if report is not None else 0
        assert imported == len(kind.kept), (kind.name, imported)
        table.append((kind.name, code, line, str(imported)))
    print_table("bad-input corpus through the Import page", table)
