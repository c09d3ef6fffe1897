"""A large JSON Lines import reads and checks its rows in reader processes
(annotate.ingest.reader_process): the store and the report are exactly what the import
makes reading the rows itself, in batches that fall anywhere; a reader that fails or is cut
off fails the import whole; an interrupted import leaves no reader running."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_import_fast_checks import TABLES, imported, mixed_file

from annotate.errors import UsageError
from annotate.ingest import importer, reader_process
from annotate.store import open_store
from tests.bench.synthetic import write_jsonl

MORE_TABLES = {
    **TABLES,
    "ratings": "SELECT trace_id, judge, criterion, score, explanation, origin, import_id "
    "FROM judge_ratings ORDER BY ALL",
    "attribute_names": "SELECT name FROM trace_attribute_names ORDER BY name",
    "imports": "SELECT id, imported, rejected, duplicates, conflicts FROM imports",
}


def rated(trace_id: str, score: float) -> dict[str, Any]:
    """A row whose verdict rates the response (judge_ratings) and one that also labels it."""
    return {
        "trace_id": trace_id,
        "response": "Refunds take 5 days.",
        "context": "Refunds are processed within 5 business days.",
        "judge": [
            {"judge": "j", "level": "response", "label": "pass", "ratings": {"faithful": score}},
            {"judge": "k", "level": "response", "ratings": {"complete": score / 2}},
        ],
        "attributes": {f"only_{trace_id}": 1},
    }


def source_file(path: Path) -> Path:
    """The fast checks' mixed file (good rows of every bench shape, every bad JSON Lines kind
    of the bad-input corpus, odd rows, duplicates), then blank lines, ratings, a conflict and
    a duplicate of rows far earlier in the file."""
    mixed_file(path)
    with path.open("ab") as fh:
        fh.write(b"\n\n   \n")
        for number in range(5):
            fh.write(json.dumps(rated(f"rated-{number}", 0.5 + number / 10)).encode() + b"\n")
        fh.write(json.dumps(rated("rated-1", 0.9)).encode() + b"\n")  # a conflict
        fh.write(json.dumps(rated("rated-2", 0.7)).encode() + b"\n")  # a duplicate
        fh.write(b"{not json\n")
    return path


def seen(fractions: list[float]) -> Any:
    """An import's progress callback keeping the fractions it is told."""
    return lambda rows, fraction: fractions.append(fraction)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return source_file(tmp_path / "mixed.jsonl")


@pytest.mark.parametrize(("readers", "batch", "piece"), [(1, 2000, 250), (2, 37, 5), (3, 7, 7)])
def test_readers_store_and_report_exactly_what_the_import_does_itself(
    tmp_path, monkeypatch, source, readers, batch, piece
):
    """In batches of 2,000 rows (the file is one), 37 rows built 5 at a time, 7 at once."""
    monkeypatch.setattr(importer, "BATCH_SIZE", batch)
    monkeypatch.setattr(reader_process, "PIECE", piece)
    monkeypatch.setattr(reader_process, "PROCESS_BYTES", 10**15)
    itself = imported(tmp_path / "itself.duckdb", source, MORE_TABLES)
    monkeypatch.setattr(reader_process, "PROCESS_BYTES", 0)
    monkeypatch.setattr(reader_process, "READERS", readers)
    progress: list[float] = []
    aside = imported(tmp_path / "aside.duckdb", source, MORE_TABLES, seen(progress))
    assert itself["readers"] == 0 and aside["readers"] == readers
    counts = aside["counts"]
    assert counts["rejected"] > 40 and counts["duplicates"] >= 21 and counts["conflicts"] >= 2
    assert len(aside["ratings"]) == 10 and aside["warnings"]
    for name in itself.keys() - {"readers"}:
        assert aside[name] == itself[name], name
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert len(progress) > (2 if batch < 100 else 1)


def test_a_reader_that_fails_raises_its_error_with_its_traceback(tmp_path):
    with (
        pytest.raises(reader_process.ReaderFailed, match="FileNotFoundError") as failed,
        reader_process.parsed_batches(
            reader_process.Reading(str(tmp_path / "gone.jsonl"), 1, 10, 1 << 16, 2)
        ) as batches,
    ):
        list(batches)
    assert "Traceback (most recent call last)" in str(failed.value)


def test_a_reader_cut_off_fails_the_import_and_stores_nothing(
    tmp_path, monkeypatch, source, db_path
):
    """A reader killed mid-file (the OOM killer, say): the import fails whole."""
    monkeypatch.setattr(reader_process, "PROCESS_BYTES", 0)
    monkeypatch.setattr(importer, "BATCH_SIZE", 50)
    original = reader_process._Reader.next
    calls = []

    def killed_after_one(self: reader_process._Reader) -> Any:
        calls.append(self)
        if len(calls) == 3:
            self.child.kill()
            self.child.wait()
        return original(self)

    monkeypatch.setattr(reader_process._Reader, "next", killed_after_one)
    store = open_store(db_path)
    try:
        with pytest.raises(reader_process.ReaderFailed, match="ended before the file did"):
            importer.import_traces(store, source, fmt="jsonl")
        assert store.scalar("SELECT count(*) FROM traces") == 0
        assert store.scalar("SELECT count(*) FROM imports") == 0
    finally:
        store.close()


def test_an_interrupted_import_leaves_no_reader_running(tmp_path, monkeypatch, source, db_path):
    monkeypatch.setattr(reader_process, "PROCESS_BYTES", 0)
    monkeypatch.setattr(importer, "BATCH_SIZE", 20)
    readers: list[reader_process._Reader] = []
    original_init = reader_process._Reader.__init__

    def kept(self: reader_process._Reader, *args: Any) -> None:
        original_init(self, *args)
        readers.append(self)

    stored = importer._store_parsed

    def interrupted(store: Any, report: Any, parsed: Any, *args: Any) -> None:
        if report.imported > 30:
            raise KeyboardInterrupt
        stored(store, report, parsed, *args)

    monkeypatch.setattr(reader_process._Reader, "__init__", kept)
    monkeypatch.setattr(importer, "_store_parsed", interrupted)
    store = open_store(db_path)
    try:
        with pytest.raises(KeyboardInterrupt):
            importer.import_traces(store, source, fmt="jsonl")
        assert store.scalar("SELECT count(*) FROM traces") == 0
    finally:
        store.close()
    assert len(readers) == reader_process.readers() == 2
    assert all(reader.child.returncode is not None for reader in readers)


def test_only_a_large_plain_json_lines_file_is_read_aside():
    large = reader_process.PROCESS_BYTES
    assert reader_process.wanted("jsonl", False, False, large) is (reader_process.cores() > 1)
    assert reader_process.readers() == (2 if reader_process.cores() > 1 else 0)
    assert not reader_process.wanted("jsonl", False, False, large - 1)
    assert not reader_process.wanted("jsonl", True, False, large)  # --map
    assert not reader_process.wanted("jsonl", False, True, large)  # a caller's own check
    assert not reader_process.wanted("otlp", False, False, large)


def test_the_number_of_readers_is_the_users_to_set(monkeypatch):
    monkeypatch.setenv("ANNOTATE_IMPORT_READERS", "0")
    assert reader_process.readers() == 0
    assert not reader_process.wanted("jsonl", False, False, reader_process.PROCESS_BYTES)
    monkeypatch.setenv("ANNOTATE_IMPORT_READERS", "3")
    assert reader_process.readers() == 3
    monkeypatch.setenv("ANNOTATE_IMPORT_READERS", "two")
    with pytest.raises(UsageError, match="ANNOTATE_IMPORT_READERS='two' is not a number"):
        reader_process.readers()


def test_a_readers_setting_that_is_not_valid_is_a_usage_error_for_any_file(
    cli, tmp_path, monkeypatch
):
    monkeypatch.setenv("ANNOTATE_IMPORT_READERS", "two")
    small = tmp_path / "t.jsonl"
    small.write_text('{"trace_id": "a", "response": "r", "context": ["c"]}\n')
    result = cli("import", str(small))
    assert result.code == 2
    assert "ANNOTATE_IMPORT_READERS='two' is not a number of reader processes" in result.err


def test_the_readers_memory_comes_out_of_the_imports_part_of_the_limit(
    tmp_path, monkeypatch, source
):
    """While reader processes read, DuckDB streams within half the limit less what they hold
    (2 x READER_BYTES), and gets the whole limit back for the commit."""
    monkeypatch.setenv("ANNOTATE_MEMORY_LIMIT", "1GB")
    monkeypatch.setattr(reader_process, "PROCESS_BYTES", 0)
    monkeypatch.setattr(importer, "BATCH_SIZE", 100)
    store = open_store(tmp_path / "limit.duckdb")
    other = store.session()  # another browser session of the app
    setting = "SELECT current_setting('memory_limit')"
    seen: list[str] = []
    stored = importer._store_parsed

    def watched(*args: Any) -> None:
        seen.append(other.scalar(setting))
        stored(*args)

    monkeypatch.setattr(importer, "_store_parsed", watched)
    try:
        assert importer.import_traces(store, source, fmt="jsonl").readers_peak_rss
        assert 2 * reader_process.READER_BYTES == 240_000_000
        assert set(seen) == {"247.9 MiB"}  # 1e9 / 2 - 240e6 = 260e6 bytes
        assert store.scalar(setting) == "953.6 MiB"
    finally:
        store.close()


@pytest.fixture
def batches_read(monkeypatch) -> list[int]:
    """The number of batches each import that used reader processes read from them."""
    counted: list[int] = []
    original = reader_process.parsed_batches

    @contextmanager
    def counting(reading: reader_process.Reading) -> Iterator[Any]:
        with original(reading) as batches:
            counted.append(0)
            iterator = iter(batches)

            class Counted:
                peaks = batches.peaks

                def __iter__(self) -> Iterator[Any]:
                    for batch in iterator:
                        counted[-1] += 1
                        yield batch

            yield Counted()

    monkeypatch.setattr(reader_process, "parsed_batches", counting)
    return counted


def large_file(path: Path) -> Path:
    """A homogeneous export just over PROCESS_BYTES."""
    count = reader_process.PROCESS_BYTES // 3000 + 200  # about 3.6 KB a row
    write_jsonl(path, count, homogeneous=True)
    assert path.stat().st_size >= reader_process.PROCESS_BYTES
    return path


def test_annotate_import_of_a_large_file_reads_it_in_readers(cli, tmp_path, batches_read, db_path):
    source = large_file(tmp_path / "export.jsonl")
    rows = sum(1 for _ in source.open("rb"))
    result = cli("import", str(source))
    assert result.code == 0, result.err
    assert f"imported {rows:,}, rejected 0" in result.out
    assert batches_read == [-(-rows // importer.BATCH_SIZE)]
    store = open_store(db_path)
    try:
        assert store.scalar("SELECT count(*) FROM traces") == rows
    finally:
        store.close()


def test_the_import_page_reads_a_large_upload_in_readers(tmp_path, monkeypatch, batches_read):
    from conftest import run_app

    from annotate.accounts.users import User

    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "app.duckdb"))
    source = large_file(tmp_path / "export.jsonl")
    rows = sum(1 for _ in source.open("rb"))
    app = run_app(User("lena", "lead"), "pages/import_traces.py")
    app.file_uploader(key="import_file_0").upload("export.jsonl", source.read_bytes()).run()
    app.button(key="import_run").click().run()
    assert not app.exception, app.exception
    assert f"imported {rows}, rejected 0" in app.success[0].value
    assert len(batches_read) == 1 and batches_read[0] > 1
