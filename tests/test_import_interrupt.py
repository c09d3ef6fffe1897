"""Ctrl-C at the end of an import says what the store holds (QA: Ctrl-C while the import
COMMITs said "Nothing of it was stored" with exit 4, or "rolled back" with exit 130, when all
300,000 rows were committed: DuckDB had made the commit durable before it saw the interrupt)."""

from __future__ import annotations

import sys

import pytest
from conftest import FIXTURES

from annotate.store import Store, open_store

GOOD = FIXTURES / "generic" / "production.jsonl"
STORED_WHOLE = "had been committed: the file is stored whole"


def _traces(db_path) -> int:
    store = open_store(db_path)
    try:
        return int(store.scalar("SELECT count(*) FROM traces"))
    finally:
        store.close()


class _Connection:
    """A DuckDB connection whose COMMIT raises what DuckDB raises when Ctrl-C reaches it:
    a plain RuntimeError, after the commit (`completes`) or instead of it."""

    def __init__(self, conn, completes: bool) -> None:
        self._conn, self._completes = conn, completes

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, sql, *args):
        if sql.startswith("UPDATE imports SET finished_at"):
            self._finishing = True  # the import's own commit comes next (not a migration's)
        if sql != "COMMIT" or not getattr(self, "_finishing", False):
            # Store.fetch_with_batch's `_batch` is a local DuckDB finds in the calling frame
            _batch = sys._getframe(1).f_locals.get("_batch")  # noqa: F841
            return self._conn.execute(sql, *args)
        self._finishing = False
        if not self._completes:
            self._conn.execute("ROLLBACK")
            raise RuntimeError("INTERRUPT Error: Query interrupted")
        self._conn.execute(sql, *args)
        raise RuntimeError("INTERRUPT Error: Query interrupted")


def _commits(monkeypatch, completes: bool) -> None:
    init = Store.__init__

    def wrapped(self, conn, path):
        init(self, _Connection(conn, completes), path)

    monkeypatch.setattr(Store, "__init__", wrapped)


def test_ctrl_c_seen_by_duckdb_during_a_commit_that_completed(cli, db_path, monkeypatch):
    _commits(monkeypatch, completes=True)
    result = cli("import", str(GOOD))
    assert result.code == 130, result.err
    assert STORED_WHOLE in result.err and "import #1 (" in result.err, result.err
    assert not (db_path.parent / "annotate-errors.log").exists()  # not a bug
    monkeypatch.undo()
    assert _traces(db_path) == 3
    again = cli("import", str(GOOD), "--json")  # as the message says: every row a duplicate
    assert again.code == 0 and again.json()["imported"] == 0


def test_ctrl_c_during_a_commit_that_did_not_complete_says_nothing_was_stored(
    cli, db_path, monkeypatch
):
    _commits(monkeypatch, completes=False)
    result = cli("import", str(GOOD))
    assert result.code == 130, result.err
    assert result.err.startswith("interrupted: the step in progress")
    assert STORED_WHOLE not in result.err
    monkeypatch.undo()
    assert _traces(db_path) == 0


@pytest.mark.parametrize("command", ["import", "import-labels"])
def test_ctrl_c_after_the_import_returned_says_it_is_stored(cli, db_path, monkeypatch, command):
    """Ctrl-C while the store closes or the report prints: the import is stored."""
    from annotate.cli import imports

    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    if command == "import-labels":
        assert cli("import", str(GOOD)).code == 0
        path = db_path.parent / "labels.jsonl"
        path.write_text(
            '{"trace_id": "t-1", "claim": 0, "reviewer": "ann", "label": "supported"}\n'
        )
    else:
        path = GOOD
    monkeypatch.setattr(imports, "_finish_import", pressed)
    result = cli(command, str(path))
    assert result.code == 130 and STORED_WHOLE in result.err, result.err
