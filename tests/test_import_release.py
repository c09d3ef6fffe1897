"""A page import hands the memory it used back (issue 36): the uploaded file leaves Streamlit's
uploaded file manager and the session's widget state, the upload box is a new empty one, and
DuckDB keeps no more cached than the release floor. The app's RSS figures are in
tests/bench/bench_import_release.py (the app at 645 MB after a 100k-trace page import, 268 MB
before: the upload alone was 295 MB of it)."""

from __future__ import annotations

import gc

import pytest
from conftest import run_app
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFile

from annotate.accounts.users import User
from tests.bench.synthetic import write_jsonl

LEAD = User("lena", "lead")
MB = 1_000_000
TRACES = 6000  # enough for DuckDB to cache more than the release floor while it imports


@pytest.fixture
def managers(monkeypatch) -> list[MemoryUploadedFileManager]:
    """The uploaded file managers AppTest makes (one per run, as a server has one), in order;
    each is the real one, only recorded."""
    made: list[MemoryUploadedFileManager] = []
    init = MemoryUploadedFileManager.__init__

    def recorded(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(MemoryUploadedFileManager, "__init__", recorded)
    return made


def uploads_held(manager: MemoryUploadedFileManager) -> int:
    """Bytes of uploaded files the manager holds (what /_stcore/metrics reports)."""
    stats = manager.get_stats().get("cache_memory_bytes", [])
    return sum(stat.byte_length for stat in stats)


def held_files() -> list[str]:
    """Names of the UploadedFile objects still alive in this process (a widget's state, a
    page's variable): each keeps its file's bytes."""
    gc.collect()
    return [o.name for o in gc.get_objects() if isinstance(o, UploadedFile)]


def test_an_imported_upload_is_handed_back_and_the_box_emptied(tmp_path, monkeypatch, managers):
    db = tmp_path / "app.duckdb"
    monkeypatch.setenv("ANNOTATE_DB", str(db))
    source = tmp_path / "traces.jsonl"
    size = write_jsonl(source, TRACES)
    app = run_app(LEAD, "pages/import_traces.py")
    app.file_uploader(key="import_file_0").upload("traces.jsonl", source.read_bytes()).run()
    assert uploads_held(managers[-1]) == size  # in the box: Streamlit holds it, as it should
    assert set(held_files()) == {"traces.jsonl"}

    app.button(key="import_run").click().run()
    assert not app.exception, app.exception
    assert f"imported {TRACES}, rejected 0" in app.success[0].value
    assert uploads_held(managers[-1]) == 0  # the import's run dropped it from the manager
    assert held_files() == []  # and no widget state keeps it (its box is gone)
    assert [(box.key, box.value) for box in app.file_uploader] == [("import_file_1", None)]
    cursor = app.session_state[f"store_cursor::{db}"]
    table = "SELECT sum(memory_usage_bytes) FROM duckdb_memory() WHERE tag = 'BASE_TABLE'"
    # release_memory ran: unreleased, these traces keep ~22 MB of the table cached; the page's
    # rerun after the import reads about half a megabyte back
    assert cursor.scalar(table) <= 4 * MB
    assert cursor.scalar("SELECT count(*) FROM traces") == TRACES  # read back from disk


def test_an_upload_that_fails_to_import_stays_in_the_box(tmp_path, monkeypatch, managers):
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "app.duckdb"))
    app = run_app(LEAD, "pages/import_traces.py")
    content = b"not a trace file\n"
    app.file_uploader(key="import_file_0").upload("notes.jsonl", content).run()
    app.button(key="import_run").click().run()
    assert not app.exception, app.exception
    assert app.error, "the file is refused with a message"
    assert uploads_held(managers[-1]) == len(content)  # kept: to import again, changed
    assert set(held_files()) == {"notes.jsonl"}
    assert [box.key for box in app.file_uploader] == ["import_file_0"]
