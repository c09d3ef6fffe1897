"""Sign-in sessions, slowed wrong passwords, and the activity log of every kind of act."""

from __future__ import annotations

import getpass
import hashlib
from datetime import datetime, timedelta

import pytest
from labelling_data import PASSWORD, prepare

from annotate.accounts.activity import activity
from annotate.accounts.users import (
    AuthError,
    User,
    add_user,
    authenticate,
    end_session,
    login_wait,
    session_user,
    set_active,
    set_password,
    set_session_hours,
    start_session,
)
from annotate.claims.extraction import create_claims, flag_claim
from annotate.labelling.adjudication import adjudicate
from annotate.labelling.assignment import assign
from annotate.labelling.session import (
    claim_view,
    record_verdict,
    set_reveal_judge_after_submit,
    skip_claim,
)


@pytest.fixture
def ready(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    return fresh_store


def test_a_token_is_random_and_only_its_hash_is_stored(ready):
    first, second = start_session(ready, "alice"), start_session(ready, "alice")
    assert first != second and len(first) >= 40
    stored = {row[0] for row in ready.fetchall("SELECT token_hash FROM auth_sessions")}
    assert stored == {hashlib.sha256(t.encode()).hexdigest() for t in (first, second)}
    assert session_user(ready, first) == User("alice", "reviewer")
    assert session_user(ready, "alice") is None and session_user(ready, PASSWORD) is None


def test_a_session_expires_after_the_set_lifetime(ready):
    set_session_hours(ready, 1)
    token = start_session(ready, "alice")
    ready.execute(
        "UPDATE auth_sessions SET expires_at = ?", [datetime.now() - timedelta(seconds=1)]
    )
    assert session_user(ready, token) is None


@pytest.mark.parametrize(
    "end",
    [
        lambda store, token: end_session(store, token),
        lambda store, token: set_active(store, "alice", False),
        lambda store, token: set_password(store, "alice", "a new passphrase"),
    ],
    ids=["log out", "deactivation", "password change"],
)
def test_log_out_deactivation_and_a_new_password_end_the_session(ready, end):
    token, other = start_session(ready, "alice"), start_session(ready, "bob")
    end(ready, token)
    assert session_user(ready, token) is None
    assert session_user(ready, other) == User("bob", "reviewer")  # nobody else's


def test_wrong_passwords_wait_longer_and_longer_and_a_sign_in_resets(ready):
    start = datetime(2026, 11, 1, 9, 0, 0)
    for second in range(5):
        with pytest.raises(AuthError, match="wrong user name or password"):
            authenticate(ready, "alice", "nope", now=start + timedelta(seconds=second))
    assert login_wait(ready, "alice", start + timedelta(seconds=4)) == timedelta(seconds=30)
    with pytest.raises(AuthError, match=r"too many wrong passwords for 'alice': wait 29 s"):
        authenticate(ready, "alice", PASSWORD, now=start + timedelta(seconds=5))
    later = start + timedelta(seconds=35)
    with pytest.raises(AuthError, match="wrong user name or password"):
        authenticate(ready, "alice", "nope", now=later)  # sixth wrong: the wait doubles
    with pytest.raises(AuthError, match="wait 59 s"):
        authenticate(ready, "alice", PASSWORD, now=later + timedelta(seconds=1))
    ok = later + timedelta(seconds=61)
    assert authenticate(ready, "alice", PASSWORD, now=ok) == User("alice", "reviewer")
    start_session(ready, "alice")  # a sign-in: the count starts again
    assert login_wait(ready, "alice") is None
    assert login_wait(ready, "bob", ok) is None  # per name


def test_an_unknown_name_is_slowed_like_a_known_one(ready):
    for _ in range(5):
        with pytest.raises(AuthError, match="wrong user name or password"):
            authenticate(ready, "nobody", "x")
    with pytest.raises(AuthError, match="too many wrong passwords for 'nobody'"):
        authenticate(ready, "nobody", "x")


def test_every_kind_of_act_is_in_the_log_with_its_actor(ready, cli, tmp_path, db_path):
    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1, assigned_by="lena")
    view = claim_view(ready, "lt-000", 0)
    record_verdict(ready, "alice", view, "supported")
    record_verdict(ready, "bob", view, "contradicted")
    skip_claim(ready, "alice", claim_view(ready, "lt-000", 1), "other")
    flag_claim(ready, "lt-000", 2, "alice", "not_atomic")
    adjudicate(ready, "lena", "lt-000", 0, "supported", "the context says so")
    set_reveal_judge_after_submit(ready, True, actor="lena")
    create_claims(ready, "demo", extractor="sentences", actor="lena")
    add_user(ready, "newbie", "reviewer", PASSWORD, actor="lena")
    kinds = {(row["kind"], row["actor"]) for row in activity(ready)}
    me = getpass.getuser()
    assert {
        ("import", me),
        ("sample", me),
        ("assignment", "lena"),
        ("verdict", "alice"),
        ("verdict", "bob"),
        ("skip", "alice"),
        ("flag", "alice"),
        ("adjudication", "lena"),
        ("claims", "lena"),
        ("setting", "lena"),
        ("account", "lena"),
    } <= kinds
    times = [row["acted_at"] for row in activity(ready)]
    assert times == sorted(times)  # oldest first
    only = activity(ready, actor="alice", kind="verdict")
    assert [(r["subject"], r["detail"]["label"]) for r in only] == [("lt-000#1", "supported")]


def test_the_cli_records_as_name_or_else_the_os_user(ready, cli, tmp_path):
    traces = tmp_path / "more.jsonl"
    traces.write_text('{"trace_id": "x-1", "response": "r", "context": ["c"]}\n')
    assert cli("import", str(traces), "--as", "lena").code == 0
    assert cli("user", "deactivate", "bob").code == 0
    bad = cli("import", str(traces), "--as", "nobody")
    assert bad.code == 2 and "--as nobody: no account named 'nobody'" in bad.err
    rows = cli("activity", "--json").json()["activity"]
    mine = [
        (r["actor"], r["origin"], r["kind"], r["subject"]) for r in rows if r["origin"] == "cli"
    ]
    assert ("lena", "cli", "import", "2") in mine
    assert (getpass.getuser(), "cli", "account", "bob") in mine
    only = cli("activity", "--json", "--user", "lena", "--kind", "import").json()["activity"]
    assert [r["detail"]["imported"] for r in only] == [1]
    assert cli("activity").out.count("\n") == len(rows)


def test_an_unknown_name_costs_the_same_password_hash_as_a_known_one(ready, monkeypatch):
    """Catches the sign-in answering an unknown name without running scrypt (2 ms against
    30 ms): the time of the answer said whether the account existed."""
    from annotate.accounts import users

    users._decoy_hash()  # made once per process, before the count
    calls: list[int] = []
    real = users.hashlib.scrypt

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(users.hashlib, "scrypt", counting)
    for name in ("lena", "nobody"):
        calls.clear()
        with pytest.raises(AuthError, match="wrong user name or password"):
            authenticate(ready, name, "not the password")
        assert len(calls) == 1, name


def test_the_last_active_lead_cannot_be_deactivated(ready):
    """Catches a store left with no lead: nobody could add, assign or reactivate accounts,
    and the sign-in page does not offer a first lead while accounts exist."""
    with pytest.raises(AuthError, match="'lena' is the last active lead"):
        set_active(ready, "lena", False)
    assert authenticate(ready, "lena", PASSWORD).role == "lead"
    add_user(ready, "leo", "lead", PASSWORD)
    set_active(ready, "lena", False)  # another lead remains
    with pytest.raises(AuthError, match="'leo' is the last active lead"):
        set_active(ready, "leo", False)
