"""Wrong passwords slow down, never lock out (annotate.accounts.throttle): an anonymous
visitor's failures never keep a lead out of a browser that has not failed, the counts decay,
and a lead can clear a name's waits."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from labelling_data import PASSWORD, prepare

from annotate.accounts.activity import activity
from annotate.accounts.throttle import ADDRESS_FREE_TRIES, DECAY, FREE_TRIES, Try
from annotate.accounts.users import AuthError, User, add_user, authenticate, login_wait, unlock

START = datetime(2026, 11, 1, 9, 0, 0)
ATTACKER = Try("attacker-browser", "10.0.0.9")


@pytest.fixture
def ready(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    add_user(fresh_store, "leo", "lead", PASSWORD)
    return fresh_store


def fail(store, name: str, origin: Try, times: int, at: datetime = START) -> None:
    for second in range(times):
        with pytest.raises(AuthError, match="wrong user name or password"):
            authenticate(store, name, "a guess", now=at + timedelta(seconds=second), origin=origin)


def test_wrong_passwords_from_one_browser_do_not_keep_the_lead_out_of_another(ready):
    fail(ready, "lena", ATTACKER, FREE_TRIES)
    soon = START + timedelta(seconds=FREE_TRIES)
    with pytest.raises(AuthError, match=r"from this browser for 'lena': wait \d+ s"):
        authenticate(ready, "lena", PASSWORD, now=soon, origin=ATTACKER)  # unchecked
    lead = Try("the-leads-browser", "10.0.0.9")  # the same address, as behind one NAT
    assert authenticate(ready, "lena", PASSWORD, now=soon, origin=lead) == User("lena", "lead")


def test_a_browser_that_failed_waits_for_a_slowed_name_and_one_that_did_not_is_checked(ready):
    fail(ready, "lena", ATTACKER, FREE_TRIES)
    other = Try("another-browser", "10.0.0.7")
    fail(ready, "lena", other, 1, START + timedelta(seconds=10))  # checked: it had not failed
    with pytest.raises(AuthError, match=r"too many wrong passwords for 'lena': wait"):
        authenticate(ready, "lena", PASSWORD, now=START + timedelta(seconds=11), origin=other)


def test_an_address_with_many_failures_slows_every_browser_until_a_lead_unlocks(ready):
    for number in range(ADDRESS_FREE_TRIES):  # a fresh browser for every try
        fail(ready, "lena", Try(f"browser-{number}", "10.0.0.9"), 1, START)
    fresh = Try("fresh", "10.0.0.9")
    with pytest.raises(AuthError, match="from this address: wait"):
        authenticate(ready, "lena", PASSWORD, now=START + timedelta(seconds=1), origin=fresh)
    assert authenticate(ready, "lena", PASSWORD, now=START, origin=Try("b", "10.0.0.1"))
    unlock(ready, "lena", actor="leo")  # the other lead's way back
    assert authenticate(ready, "lena", PASSWORD, origin=fresh) == User("lena", "lead")


def test_wrong_passwords_stop_counting_after_a_while(ready):
    fail(ready, "alice", Try(), FREE_TRIES)
    assert login_wait(ready, "alice", START + timedelta(seconds=10))
    fail(ready, "alice", Try(), 1, START + DECAY + timedelta(minutes=1))  # the first ones decayed
    later = START + DECAY + timedelta(minutes=1, seconds=1)
    assert login_wait(ready, "alice", later) is None


def test_user_unlock_clears_the_waits_and_is_logged(ready, cli, db_path):
    ready.close()
    from annotate.store import open_store

    store = open_store(db_path)
    try:
        fail(store, "alice", Try(), FREE_TRIES, datetime.now() - timedelta(seconds=10))
        assert login_wait(store, "alice")
    finally:
        store.close()
    result = cli("user", "unlock", "ALICE", "--as", "leo")
    assert result.code == 0 and "alice can sign in again" in result.out + result.err
    store = open_store(db_path)
    try:
        assert login_wait(store, "alice") is None
        assert authenticate(store, "alice", PASSWORD) == User("alice", "reviewer")
        logged = [(a["actor"], a["subject"]) for a in activity(store, kind="account")]
        assert ("leo", "alice") in logged
    finally:
        store.close()


def test_the_other_lead_clears_the_waits_on_the_users_page(tmp_path, monkeypatch):
    from conftest import plain, run_app

    from annotate.store import open_store

    path = tmp_path / "users.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    add_user(store, "leo", "lead", PASSWORD)
    fail(store, "lena", Try(), FREE_TRIES, datetime.now() - timedelta(seconds=5))
    assert login_wait(store, "lena")
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    app = run_app(User("leo", "lead"), "pages/users.py")
    app.selectbox(key="users_target").select("lena").run()
    app.button(key="users_unlock").click().run()
    assert "lena signs in again without waiting." in [plain(s.value) for s in app.success]
    store = open_store(path)
    try:
        assert login_wait(store, "lena") is None
    finally:
        store.close()
