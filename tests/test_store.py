"""The store: migrations recorded once and in order, the default rubric, errors translated."""

from __future__ import annotations

import duckdb
import pytest

from annotate.errors import StoreError
from annotate.store import open_store, resolve_db_path
from annotate.store.labels import active_rubric
from annotate.store.schema import MIGRATIONS


def test_every_migration_is_recorded_once_in_order(db_path):
    open_store(db_path).close()
    store = open_store(db_path)  # reopening applies nothing twice
    rows = store.fetchall("SELECT version, name FROM schema_migrations ORDER BY version")
    assert rows == [(i, name) for i, (name, _) in enumerate(MIGRATIONS, start=1)]
    assert store.schema_version() == len(MIGRATIONS)
    store.close()


def test_the_default_rubric_exists_in_every_new_store(fresh_store):
    version, labels = active_rubric(fresh_store)
    assert version == 1
    assert [(item["label"], item["binary"]) for item in labels] == [
        ("supported", "supported"),
        ("partially_supported", "unsupported"),
        ("contradicted", "unsupported"),
        ("not_in_context", "unsupported"),
        ("not_a_claim", "excluded"),
    ]


def test_duckdb_errors_surface_as_store_errors(fresh_store):
    with pytest.raises(StoreError, match="no_such_table"):
        fresh_store.fetchall("SELECT * FROM no_such_table")


def test_a_failed_transaction_leaves_nothing(fresh_store):
    with pytest.raises(RuntimeError), fresh_store.transaction():
        fresh_store.execute("INSERT INTO import_errors VALUES (1, 1, 'f', 'm')")
        raise RuntimeError("boom")
    assert fresh_store.scalar("SELECT count(*) FROM import_errors") == 0


def test_a_file_that_is_not_duckdb_is_a_store_error(tmp_path):
    path = tmp_path / "notes.duckdb"
    path.write_text("this is not a database")
    with pytest.raises(StoreError, match="cannot open"):
        open_store(path)


def test_db_path_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("ANNOTATE_DB", raising=False)
    assert str(resolve_db_path()) == "data/annotate.duckdb"
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "env.duckdb"))
    assert resolve_db_path() == tmp_path / "env.duckdb"
    assert resolve_db_path(tmp_path / "flag.duckdb") == tmp_path / "flag.duckdb"


def test_session_cursors_see_each_others_commits(fresh_store):
    one, two = fresh_store.session(), fresh_store.session()
    with one.transaction():
        one.execute("INSERT INTO import_errors VALUES (7, 1, 'f', 'm')")
    assert two.scalar("SELECT count(*) FROM import_errors WHERE import_id = 7") == 1
    assert isinstance(one.conn, duckdb.DuckDBPyConnection)


def test_one_session_used_from_two_threads_takes_turns(fresh_store):
    """Streamlit may start a session's rerun while the interrupted run still queries."""
    import threading

    session = fresh_store.session()
    errors: list[Exception] = []

    def work(offset: int) -> None:
        try:
            for i in range(200):
                with session.transaction():
                    session.execute(
                        "INSERT INTO import_errors VALUES (?, ?, 'f', 'm')", [offset, i]
                    )
                session.fetchall("SELECT count(*) FROM import_errors")
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert session.scalar("SELECT count(*) FROM import_errors") == 400


def _write(path, rows):
    import json

    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _trace(trace_id: str, **attributes) -> dict:
    return {"trace_id": trace_id, "response": "It is 4.", "context": "2 + 2 = 4", **attributes}


def test_attribute_names_come_from_the_imports_without_a_trace_scan(fresh_store, tmp_path):
    """Catches a page offering stale slices: each import adds the keys it brings, once; a
    failed import adds none; the list is what the traces' own JSON holds."""
    from annotate.ingest.importer import import_traces
    from annotate.store.samples import attribute_names, has_attribute

    assert attribute_names(fresh_store) == []
    rows = [_trace("a", tenant="x", chunking="c1"), _trace("b", tenant="y"), _trace("c")]
    import_traces(fresh_store, _write(tmp_path / "one.jsonl", rows))
    assert attribute_names(fresh_store) == ["chunking", "tenant"]
    import_traces(fresh_store, _write(tmp_path / "two.jsonl", [_trace("d", tenant="z", app="w")]))
    assert attribute_names(fresh_store) == ["app", "chunking", "tenant"]
    assert fresh_store.scalar("SELECT count(*) FROM trace_attribute_names") == 3
    assert attribute_names(fresh_store, limit=2) == ["app", "chunking"]
    assert has_attribute(fresh_store, "tenant") and not has_attribute(fresh_store, "region")
    scanned = fresh_store.fetchall(
        "SELECT DISTINCT unnest(json_keys(attributes)) AS k FROM traces ORDER BY k"
    )
    assert [k for (k,) in scanned] == attribute_names(fresh_store)

    with pytest.raises(RuntimeError), fresh_store.transaction():
        import_traces(fresh_store, _write(tmp_path / "three.jsonl", [_trace("e", region="eu")]))
        raise RuntimeError("the import's transaction rolls back")
    assert not has_attribute(fresh_store, "region")


def test_migration_0013_lists_the_attribute_names_of_traces_imported_before_it(db_path, tmp_path):
    from annotate.ingest.importer import import_traces
    from annotate.store.samples import attribute_names

    store = open_store(db_path)
    import_traces(store, _write(tmp_path / "t.jsonl", [_trace("a", tenant="x"), _trace("b")]))
    store.execute("DROP TABLE trace_attribute_names")
    store.execute("DELETE FROM schema_migrations WHERE name = '0013_attribute_names'")
    store.close()
    store = open_store(db_path)  # 0013 applied again, as to a store from before it
    try:
        assert attribute_names(store) == ["tenant"]
    finally:
        store.close()


def test_migration_0014_drops_the_lookup_indexes_an_import_had_to_merge_at_its_commit(db_path):
    """Catches the trace-id indexes of contexts, claims and verdicts (and the judge-name one)
    coming back: a 1,000,000-trace import's commit merged them where DuckDB cannot spill. The
    keys that check something stay."""
    lookups = ("claims_trace", "contexts_trace", "verdicts_judge", "verdicts_trace")
    indexes = "SELECT index_name FROM duckdb_indexes() ORDER BY index_name"
    store = open_store(db_path)
    assert not set(lookups) & {name for (name,) in store.fetchall(indexes)}
    store.execute("CREATE INDEX contexts_trace ON contexts (trace_id)")  # a store from before
    store.execute("CREATE INDEX verdicts_judge ON judge_verdicts (judge)")
    store.execute("DELETE FROM schema_migrations WHERE name = '0014_fewer_indexes'")
    store.close()
    store = open_store(db_path)
    try:
        assert [name for (name,) in store.fetchall(indexes)] == [
            "activity_acted_at",
            "assignments_reviewer",
            "label_events_claim",
            "sample_units_sample",
        ]
        with pytest.raises(StoreError, match='duplicate key "a"'):  # traces' primary key
            store.execute(
                "INSERT INTO traces VALUES ('a', 1, 1, 'h', NULL, NULL, NULL, NULL, NULL, 'r', "
                "true, '{}'), ('a', 1, 2, 'h', NULL, NULL, NULL, NULL, NULL, 'r', true, '{}')"
            )
    finally:
        store.close()


def test_insert_arrow_never_runs_a_column_name_as_sql(fresh_store, tmp_path):
    """Caught: column names were pasted into the INSERT, and an auditor bundle's Parquet names
    its own columns: this one wrote a file of its choosing and the check passed."""
    import pyarrow as pa

    written = tmp_path / "pwned.csv"
    name = f"line) SELECT 1 WHERE false; COPY (SELECT 42 AS x) TO '{written}'; --"
    with pytest.raises(StoreError):
        fresh_store.insert_arrow("import_errors", [name], pa.table({name: [1]}))
    assert not written.exists()
