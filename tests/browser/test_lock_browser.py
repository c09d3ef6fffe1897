"""The lock from the start, as the README says: the app takes the DuckDB write lock when the
first browser session opens. Before that a CLI write succeeds; after it, a CLI write fails at
once with exit 3, naming the process that holds the store; the lock stays until the app stops."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT = 120.0


def annotate(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("annotate")), *args, "--db", str(db)]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False
    )


def rows(folder: Path, name: str) -> Path:
    path = folder / f"{name}.jsonl"
    row = {"trace_id": name, "response": "Refunds take 5 days.", "context": ["doc"]}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def test_a_cli_write_succeeds_until_the_first_session_then_fails_at_once(app_url, app_store, page):
    before = annotate("import", str(rows(app_store.parent, "before-session")), db=app_store)
    assert before.returncode == 0, before.stderr

    page.goto("/")
    expect(page.get_by_label("User name")).to_be_visible()  # the session has opened the store

    started = time.monotonic()
    after = annotate("import", str(rows(app_store.parent, "after-session")), db=app_store)
    assert after.returncode == 3
    assert time.monotonic() - started < 30  # at once: no waiting for the lock
    message = after.stderr.strip()
    assert len(message.splitlines()) == 1
    assert message.startswith(f"error: {app_store} is open for writing in another process (PID ")
    assert "streamlit" in message
    assert "Stop that process" in message

    page.close()  # the connection is the process's: closing the tab keeps the lock
    still = annotate("status", db=app_store)
    assert still.returncode == 3, still.stderr
