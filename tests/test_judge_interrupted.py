"""A judge run whose process is killed mid-way reads 'interrupted' with the verdicts it stored,
in the store, in `annotate judge` and on the Rubric page (QA: it stayed 'running' with 0
judged and no end, and the page said the last run "ended running with 0 verdicts" though 30
were stored)."""

# ruff: noqa: F811 - the fake_anthropic fixture is imported by name
from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, run_app
from fake_anthropic import FakeAnthropic, Reply, fake_anthropic  # noqa: F401 - the fixture
from judge_fakes import answer
from rubric_data import prepare_rubric_store

from annotate.accounts.users import User
from annotate.store import judge_runs as run_sql
from annotate.store import open_store

STORED = 5  # calls answered (one claim each) before the next one hangs and the process is killed
OUTCOME = f"was interrupted (its process stopped) with {STORED} verdicts stored, 0 failed"


def hang_after(fake: FakeAnthropic, answered: int, release: threading.Event) -> None:
    """The fake answers `answered` calls, then holds every further one until `release`."""
    count = itertools.count()

    def respond(request: dict) -> Reply:
        if next(count) >= answered:
            release.wait(120)
        return answer(request)

    fake.responder = respond


def judge_in_a_process(db: Path, url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}
    command = [str(Path(sys.executable).with_name("annotate")), "judge", "--sample", "loop"]
    command += ["--concurrency", "1", "--db", str(db)]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def wait_for_progress(process: subprocess.Popen[bytes], text: str) -> None:
    """Read the progress line ("\\r5/60 calls": written after those verdicts are committed)."""
    seen = b""
    assert process.stderr is not None
    while text.encode() not in seen:
        byte = process.stderr.read(1)
        assert byte, f"the judge ended before {text!r}: {seen.decode(errors='replace')}"
        seen += byte


@pytest.fixture
def killed_run(fresh_store, db_path, tmp_path, fake_anthropic) -> Path:
    """A store whose judge run was SIGKILLed after STORED verdicts were committed."""
    prepare_rubric_store(fresh_store, tmp_path, count=30)
    fresh_store.close()
    release = threading.Event()
    hang_after(fake_anthropic, STORED, release)
    process = judge_in_a_process(db_path, fake_anthropic.url)
    try:
        wait_for_progress(process, f"{STORED}/")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        release.set()
        process.kill()
        if process.stderr:
            process.stderr.close()
    return db_path


def test_the_next_open_of_the_store_marks_the_killed_run_interrupted_with_its_verdicts(
    killed_run,
):
    store = open_store(killed_run)
    try:
        [run] = run_sql.runs(store)
        stored = store.scalar("SELECT count(*) FROM judge_verdicts WHERE run_id = ?", [run["id"]])
        assert (run["status"], run["judged"], stored) == ("interrupted", STORED, STORED)
        assert run["finished_at"] is not None and run["finished_at"] >= run["started_at"]
    finally:
        store.close()


def test_the_next_run_says_it_resumes_the_interrupted_one(
    killed_run, cli, fake_anthropic, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.responder = answer
    result = cli("judge", "--sample", "loop", "--concurrency", "2")
    assert result.code == 0, result.err
    assert "resumes the last run: the run started " in result.out and OUTCOME in result.out
    document = cli("judge", "--sample", "loop", "--dry-run", "--json").json()
    assert document["resumes"] is None  # the second run ended: nothing left to resume


def test_the_rubric_page_says_the_last_run_was_interrupted(killed_run, monkeypatch):
    monkeypatch.setenv("ANNOTATE_DB", str(killed_run))
    app = run_app(User("lena", "lead"), "pages/rubric.py")
    # the page escapes every value for Markdown: read it as it shows
    captions = re.sub(r"\\(.)", r"\1", " ".join(c.value for c in app.caption))
    assert OUTCOME in captions, captions
    assert "ended running" not in captions
