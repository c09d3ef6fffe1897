"""Shared fixtures: real DuckDB files in tmp_path, the fixture folder, the CLI in-process."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from annotate.cli import main
from annotate.store import Store, open_store

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

if str(ROOT) not in sys.path:  # pages import `ui` from the repo root
    sys.path.insert(0, str(ROOT))

# The lead pages' compute-ahead worker (widgets/ahead.py) is off in the tests (and in the apps
# they start, which inherit this): every AppTest run opens Home first, and a worker per test
# would add a background statistics run to each. tests/test_compute_ahead.py turns it on.
os.environ.setdefault("ANNOTATE_COMPUTE_AHEAD", "0")

from tests.producers.fixtures import produced  # noqa: E402,F401 - real traces per producer

# `make mutate` runs the tests with --hypothesis-profile=mutate: a mutant only has to make a
# property fail, so the failing example is reported at once instead of being shrunk.
settings.register_profile("mutate", phases=[Phase.explicit, Phase.reuse, Phase.generate])


# Files that take a worker a minute or more (a browser and its app, a tracing server, real
# producers, simulations, the benches). make test gives a file to a worker (--dist loadfile)
# in collection order (--no-loadscope-reorder; xdist's own order, most tests first, left the
# browser files for last and one worker running them alone): these go first.
LONG_FILES = (
    "tests/browser/", "test_connectors_mlflow", "test_connectors_phoenix", "test_producers",
    "test_import_corpus", "test_bench_smoke", "test_coverage_simulation", "test_labelling",
    "test_rates_simulation", "test_rates_trend_drift", "test_stats_fast_paths",
    "test_import_producers",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not any(part in item.nodeid for part in LONG_FILES))


@pytest.fixture(autouse=True)
def cheap_password_hashes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Accounts the tests make in this process hash at scrypt's n=2**4, not the product's
    2**14 (which was an eighth of a test worker's time). A stored hash names its own cost, so
    the app and the CLI, run as subprocesses at full cost, check these and these check theirs.
    A test marked `real_password_cost` (the one of the cost itself) keeps the product's."""
    if request.node.get_closest_marker("real_password_cost") is None:
        from annotate.accounts import users

        monkeypatch.setattr(users, "_N", 2**4)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "annotate.duckdb"


@pytest.fixture(scope="session")
def bundled_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store `make run` makes (`annotate init` on an empty file): the sample traces, the
    demo sample, the simulated reviewers' labels and lead's adjudications. Copy it to change it."""
    path = tmp_path_factory.mktemp("bundled") / "annotate.duckdb"
    assert main(["init", "--db", str(path)]) == 0
    return path


@pytest.fixture
def fresh_store(db_path: Path) -> Iterator[Store]:
    store = open_store(db_path)
    yield store
    store.close()


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self) -> dict:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db_path: Path):
    """Run `annotate ...` in-process against this test's store file."""

    def run(*args: str, db: Path | None = db_path) -> CliResult:
        argv = [*args, "--db", str(db)] if db is not None else list(args)
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refuses the arguments: exit 2, message on stderr
            code = exc.code if isinstance(exc.code, int) else 2
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def plain(markdown: str) -> str:
    """What an escaped Markdown string (ui.md / ui.fmt) shows: its backslash escapes undone."""
    import re

    return re.sub(r"\\(.)", r"\1", markdown)


def sign_in_token(user) -> str:
    """A real session token for `user` in the store the app opens ($ANNOTATE_DB); the account
    is created (with a test password) when the store does not have it yet."""
    from annotate.accounts.users import add_user, start_session
    from annotate.store import resolve_db_path
    from annotate.store.users import user_row

    store = open_store(resolve_db_path())
    try:
        if user_row(store, user.name) is None:
            add_user(store, user.name, user.role, "test passphrase")
        return start_session(store, user.name)
    finally:
        store.close()


def run_app(user, page: str | None = None):
    """Run app.py under AppTest as `user` (signed in with a real session token), open `page`."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if user is not None:
        app.session_state["auth_token"] = sign_in_token(user)
    app.run()
    if page:
        app.switch_page(page).run()
    assert not app.exception, app.exception
    return app


def open_panel(app, key: str):
    """Turn on the panel `key` (ui.lazy_panel) as a click would, and rerun."""
    app.session_state[key] = True
    app.run()
    assert not app.exception, app.exception
    return app


def open_tab(app, key: str, name: str):
    """Open the tab `name` of the tabs `key` (ui.lazy_tabs) as a click would, and rerun."""
    app.session_state[key] = name
    app.run()
    assert not app.exception, app.exception
    return app


def button_for(app, prefix: str):
    """The one button whose key starts with `prefix` (label keys also name the claim shown)."""
    found = [b for b in app.button if b.key and b.key.startswith(prefix)]
    assert len(found) == 1, [b.key for b in app.button]
    return found[0]


def stored(db_path: Path, query: str) -> list[tuple]:
    """The rows of `query` in the store file, read after the command closed it."""
    from annotate.store import open_store

    store = open_store(db_path, read_only=True)
    try:
        return [tuple(row) for row in store.fetchall(query)]
    finally:
        store.close()


def errors(result) -> list[tuple[int, str, str]]:
    """An `annotate import --json` result's errors as (line, field, message)."""
    return [(e["line"], e["field"], e["message"]) for e in result.json()["errors"]]


def wait_until_waiting_for_a_read(thread) -> None:
    """Until `thread` waits in annotate.kept.Recent.get for a read another thread is making
    (its innermost frame on the `with reading:` line): a condition, not a pause."""
    import linecache
    import threading
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident)
        if frame is not None and frame.f_code.co_name == "get":
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            if (
                frame.f_code.co_filename.endswith("annotate/kept/__init__.py")
                and "with reading:" in line
            ):
                return
        if not thread.is_alive():
            raise AssertionError("the thread ended without waiting for the read under way")
        threading.Event().wait(0.005)  # poll again
    raise AssertionError("the thread never waited for the read under way")
