"""Sign-in sessions, slowed wrong passwords, and the activity log of every kind of act."""

from __future__ import annotations

import getpass
import hashlib
import io
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


def test_tries_at_the_same_instant_cannot_pass_the_lockout(ready, monkeypatch):
    """Catches wrong passwords counted only after they were checked: twelve sessions trying
    at once all passed the wait check before any failure was stored, so each got its
    password checked (an attacker's free tries grew with the sessions they opened)."""
    import threading
    import time

    from annotate.accounts import users

    checked: list[str] = []
    real = users.check_password

    def slow_check(password, stored):
        checked.append(password)
        time.sleep(0.05)  # long enough that every thread reaches the wait check meanwhile
        return real(password, stored)

    monkeypatch.setattr(users, "check_password", slow_check)
    outcomes: list[str] = []
    start = threading.Barrier(12)

    def attacker(number: int) -> None:
        session = ready.session()
        start.wait()
        try:
            authenticate(session, "alice", f"guess {number}")
        except AuthError as exc:
            outcomes.append(str(exc).split(":")[0])

    threads = [threading.Thread(target=attacker, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(checked) == users.FREE_TRIES
    assert sorted(outcomes) == sorted(
        ["wrong user name or password"] * 5 + ["too many wrong passwords for 'alice'"] * 7
    )


def test_a_name_signs_in_whatever_its_case_and_cannot_be_taken_twice(ready):
    """Catches names compared byte for byte: 'Alice' was a second account beside 'alice'
    (one passing for the other in every list), and the lockout counted each spelling's
    wrong passwords apart, five free tries a spelling."""
    assert authenticate(ready, "ALICE", PASSWORD) == User("alice", "reviewer")
    for spelling in ("Alice", "ＡＬＩＣＥ", " alice"):  # the last: fullwidth letters (NFKC)
        with pytest.raises(AuthError, match="a user named 'alice' exists already"):
            add_user(ready, spelling, "reviewer", PASSWORD)
    assert add_user(ready, "ﬁona", "reviewer", PASSWORD).name == "fiona"  # the ligature fi
    for spelling in ("Alice", "ALICE", "alice", "aLiCe", "ＡＬＩＣＥ"):
        with pytest.raises(AuthError, match="wrong user name or password"):
            authenticate(ready, spelling, "nope")
    with pytest.raises(AuthError, match="too many wrong passwords for 'alice'"):
        authenticate(ready, "Alice", PASSWORD)


def test_sign_ins_sign_outs_and_wrong_passwords_are_in_the_log(ready, cli):
    """Catches an activity log without sign-ins: an auditor could not tell who was signed in
    when, nor see someone guessing passwords."""
    with pytest.raises(AuthError):
        authenticate(ready, "alice", "nope")
    with pytest.raises(AuthError):
        authenticate(ready, "mallory", "guess")
    token = start_session(ready, authenticate(ready, "alice", PASSWORD).name)
    end_session(ready, token)
    start_session(ready, "bob")
    set_active(ready, "bob", False)
    rows = [
        (row["kind"], row["actor"], row["detail"].get("reason"))
        for row in activity(ready)
        if row["kind"].startswith("sign")
    ]
    assert rows == [
        ("sign_in_failed", "alice", None),
        ("sign_in_failed", "mallory", None),
        ("sign_in", "alice", None),
        ("sign_out", "alice", "logout"),
        ("sign_in", "bob", None),
        ("sign_out", "bob", "deactivated"),
    ]
    result = cli("activity", "--json", "--kind", "sign_in_failed")
    assert result.code == 0, result.err
    shown = result.json()["activity"]
    assert [row["actor"] for row in shown] == ["alice", "mallory"]


def test_the_cli_acts_as_an_account_only_within_its_role(ready, cli, tmp_path, monkeypatch):
    """Catches `--as` checking only that the account is active: a reviewer's name was
    recorded on an import, a sample and an account change, acts a reviewer cannot do in the
    app, and the activity log told an auditor so."""
    add_user(ready, "audrey", "auditor", PASSWORD)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no password: a prompt would say so
    traces = tmp_path / "more.jsonl"
    traces.write_text('{"trace_id": "x-1", "response": "r", "context": ["c"]}\n')
    before = len(activity(ready)), cli("status", "--json").json()["traces"]
    for who, args in [
        ("alice", ("import", str(traces))),
        ("audrey", ("import", str(traces))),
        ("alice", ("sample", "--name", "more", "--n", "2", "--by", "feature")),
        ("alice", ("user", "deactivate", "bob")),
        ("audrey", ("assign", "--sample", "demo", "--reviewers", "alice", "--per-trace", "1")),
        ("audrey", ("user", "add", "zed", "--role", "lead")),  # refused before the password
        ("audrey", ("sample", "--name", "more", "--n", "1", "--by", "feature")),  # before the plan
        ("alice", ("activity",)),  # a reviewer reads nothing either: blind, as in the app
        ("alice", ("rates", "--sample", "demo")),
    ]:
        result = cli(*args, "--as", who)
        assert result.code == 2, (who, args, result.err)
        assert f"--as {who}: '{who}' is a" in result.err
        assert "use --as with a lead's" in result.err
    # nothing was done, nothing recorded: x-1 is not imported
    assert (len(activity(ready)), cli("status", "--json").json()["traces"]) == before
    exported = cli(
        "export-rates", "--sample", "demo", "--format", "csv", "--out", str(tmp_path / "r.csv"),
        "--as", "audrey",
    )  # fmt: skip
    assert exported.code == 0, exported.err
    assert cli("import", str(traces), "--as", "LENA").code == 0  # found as sign-in finds it
    acts = [(row["actor"], row["kind"]) for row in activity(ready)]
    assert ("audrey", "export") in acts and ("lena", "import") in acts
