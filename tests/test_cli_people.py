"""`annotate user` and `annotate assign`, and durability of verdicts through a SIGKILL."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys

from conftest import ROOT
from labelling_data import prepare

from annotate.accounts.users import authenticate
from annotate.store import open_store


def test_user_add_reads_the_password_from_stdin_never_an_argument(cli, monkeypatch, db_path):
    monkeypatch.setattr(sys, "stdin", io.StringIO("a long passphrase\n"))
    result = cli("user", "add", "rita", "--role", "reviewer")
    assert result.code == 0 and "added rita (reviewer)" in result.err
    store = open_store(db_path)
    try:
        assert authenticate(store, "rita", "a long passphrase").role == "reviewer"
    finally:
        store.close()
    assert cli("user", "list", "--json").json() == {
        "users": [{"name": "rita", "role": "reviewer", "active": True, "external": False}]
    }


def test_user_add_refuses_a_short_password(cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    result = cli("user", "add", "rita", "--role", "reviewer")
    assert result.code == 2 and "at least 8 characters" in result.err  # a usage error


def test_deactivated_accounts_keep_their_labels(cli, db_path, tmp_path):
    store = open_store(db_path)
    prepare(store, tmp_path)
    store.execute(
        "INSERT INTO label_events (trace_id, claim_index, reviewer, label, rubric_version, created_at, origin) "
        "VALUES ('lt-000', 0, 'bob', 'supported', 1, now()::TIMESTAMP, 'app')"
    )
    store.close()
    assert cli("user", "deactivate", "bob").code == 0
    listed = {u["name"]: u["active"] for u in cli("user", "list", "--json").json()["users"]}
    assert listed["bob"] is False
    store = open_store(db_path)
    try:
        assert store.scalar("SELECT count(*) FROM label_events WHERE reviewer = 'bob'") == 1
    finally:
        store.close()
    labels = tmp_path / "labels.jsonl"  # made elsewhere after bob left: refused, by line
    labels.write_text(
        '{"trace_id": "lt-000", "claim": 1, "reviewer": "bob", "label": "supported"}\n'
        '{"trace_id": "lt-000", "claim": 1, "reviewer": "carol", "label": "supported"}\n'
    )
    imported = cli("import-labels", str(labels), "--json")
    assert imported.code == 1 and imported.json()["imported"] == 1
    assert [(e["line"], e["field"], e["message"]) for e in imported.json()["errors"]] == [
        (1, "reviewer", "'bob' is a deactivated account: its labels are not taken")
    ]


def test_assign_command(cli, db_path, tmp_path):
    store = open_store(db_path)
    prepare(store, tmp_path)
    store.close()
    result = cli(
        "assign",
        "--sample",
        "demo",
        "--reviewers",
        "alice,bob,carol",
        "--per-trace",
        "2",
        "--seed",
        "4",
        "--json",
    )
    assert result.code == 0
    assert result.json() == {
        "sample": "demo",
        "added": 24,
        "released": 0,
        "load": {"alice": 8, "bob": 8, "carol": 8},
        "overlap_traces": 12,
    }
    bad = cli("assign", "--sample", "nope", "--reviewers", "alice")
    assert bad.code == 2 and "no sample named 'nope'" in bad.err


LABELLER = """
import sys
from annotate.store import open_store
from annotate.labelling.session import next_claim, record_verdict
store = open_store(sys.argv[1])
while True:
    view = next_claim(store, "alice", "demo")
    if view is None:
        break
    event = record_verdict(store, "alice", view, "supported")
    print(event, view.trace_id, view.claim_index, flush=True)  # acknowledged: committed
"""


def test_every_acknowledged_verdict_survives_a_sigkill(db_path, tmp_path):
    store = open_store(db_path)
    prepare(store, tmp_path)
    from annotate.labelling.assignment import assign

    assign(store, "demo", ["alice"], per_trace=1, seed=1)
    store.close()
    labeller = subprocess.Popen(
        [sys.executable, "-c", LABELLER, str(db_path)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    acknowledged = []
    assert labeller.stdout is not None
    for line in labeller.stdout:
        acknowledged.append(tuple(line.split()))
        if len(acknowledged) == 15:
            os.kill(labeller.pid, signal.SIGKILL)
            break
    labeller.wait(timeout=30)
    assert labeller.returncode == -signal.SIGKILL
    store = open_store(db_path)
    try:
        stored = {
            (str(e), t, str(c))
            for e, t, c in store.fetchall(
                "SELECT event_id, trace_id, claim_index FROM label_events"
            )
        }
    finally:
        store.close()
    assert set(acknowledged) <= stored
    assert len(stored) >= 15


def test_a_password_piped_with_a_windows_line_ending_keeps_no_carriage_return(
    cli, monkeypatch, db_path
):
    """Catches `printf 'pass\\r\\n' | annotate user add` storing 'pass\\r', a password no
    browser can type."""
    from annotate.accounts.users import authenticate
    from annotate.store import open_store

    monkeypatch.setattr(sys, "stdin", io.StringIO("a long passphrase\r\n"))
    assert cli("user", "add", "win", "--role", "lead").code == 0
    store = open_store(db_path)
    try:
        assert authenticate(store, "win", "a long passphrase").name == "win"
    finally:
        store.close()


def test_account_changes_find_the_name_as_sign_in_does(cli, monkeypatch, db_path):
    """`user deactivate/activate/password` take the name in any case or Unicode spelling, as
    sign-in and --as do, and name the account they changed."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("a long passphrase\n"))
    assert cli("user", "add", "rita", "--role", "reviewer").code == 0
    deactivated = cli("user", "deactivate", "RITA")
    assert deactivated.code == 0 and "rita is now deactivated" in deactivated.err
    assert cli("user", "list", "--json").json()["users"][0]["active"] is False
    assert "rita is now active" in cli("user", "activate", "ＲＩＴＡ").err
    monkeypatch.setattr(sys, "stdin", io.StringIO("another passphrase\n"))
    changed = cli("user", "password", "Rita")
    assert changed.code == 0 and "rita has a new password" in changed.err
    store = open_store(db_path)
    try:
        assert authenticate(store, "rita", "another passphrase").name == "rita"
    finally:
        store.close()
    assert cli("user", "deactivate", "nobody").code == 2
