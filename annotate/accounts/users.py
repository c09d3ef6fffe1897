"""Local accounts: roles, scrypt password hashes, sign-in sessions, slowed wrong passwords
(the waits: annotate.accounts.throttle).

Roles: reviewer (labels their own queue), lead (everything), auditor (read-only).
External reviewers (labels imported from elsewhere) have no password and cannot sign in.
A session is an opaque random token; only its sha256 is stored, and deactivation, a
password change or Log out revoke it. No default password exists.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
import threading
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from annotate.accounts.activity import Actor, as_actor, os_actor, record_act
from annotate.accounts.throttle import FREE_TRIES as FREE_TRIES  # where callers know it
from annotate.accounts.throttle import Try, say_duration, try_wait
from annotate.errors import UsageError
from annotate.store import Store
from annotate.store import users as sql
from annotate.store.assignments import get_setting, put_setting
from annotate.traces.limits import REVIEWER_NAME_CHARS, check_reviewer_name

ROLES = ("reviewer", "lead", "auditor")
MIN_PASSWORD = 8
# scrypt cost: n=2**14, r=8 is the OWASP-recommended minimum (16 MiB, tens of ms a check)
_N, _R, _P = 2**14, 8, 1
SESSION_HOURS_KEY = "session_hours"
DEFAULT_SESSION_HOURS = 12.0
# Tries for one name are checked one after another, each after the failures before it are
# counted: sessions trying at the same instant cannot all pass the lockout (one process holds
# the store for writing, so a lock in it is enough). 64 locks, chosen by the name's hash.
BY_COMMAND = Try()  # no browser: a try from the command line (or a test) counts as one that failed
_TRY_LOCKS = tuple(threading.Lock() for _ in range(64))


class AuthError(UsageError):
    """Wrong name or password, an inactive account, or a forbidden action (a usage error:
    the CLI exits 2)."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    active: bool = True
    external: bool = False

    @property
    def is_lead(self) -> bool:
        return self.role == "lead"

    @property
    def can_label(self) -> bool:
        return self.role in ("reviewer", "lead")


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    encode = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${encode(salt).decode()}${encode(digest).decode()}"


def check_password(password: str, stored: str | None) -> bool:
    if not stored or not stored.startswith("scrypt$"):
        return False
    _, n, r, p, salt, digest = stored.split("$")
    expected = base64.b64decode(digest)
    actual = hashlib.scrypt(
        password.encode(),
        salt=base64.b64decode(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=len(expected),
    )
    return hmac.compare_digest(actual, expected)


def has_accounts(store: Store) -> bool:
    """True once any account that can log in exists (external reviewers do not count)."""
    return sql.count_loginable(store) > 0


def add_user(
    store: Store, name: str, role: str, password: str, actor: Actor | str | None = None
) -> User:
    try:  # one rule for every route that names a user (accounts, imported reviewers)
        name = check_reviewer_name(unicodedata.normalize("NFKC", name))
    except ValueError as exc:
        raise AuthError(f"the user name {exc}") from None
    if role not in ROLES:
        raise AuthError(f"unknown role {role!r}; use one of: {', '.join(ROLES)}")
    _check_password_rules(password)
    existing = sql.user_row(store, name)
    twin = next((row for row in sql.all_users(store) if fold_name(row[0]) == fold_name(name)), None)
    if existing is None and twin is not None:
        raise AuthError(
            f"a user named {twin[0]!r} exists already; names that differ only in case or in "
            "how a character is written would pass for each other: pick another name"
        )
    with store.transaction():
        record_act(store, actor, "account", name, action="add", role=role)
        if existing is None:
            sql.insert_user(store, name, role, hash_password(password))
        elif existing[
            "external"
        ]:  # an external reviewer gets an account; imported labels stay theirs
            sql.promote_external(store, name, role, hash_password(password))
        else:
            raise AuthError(f"a user named {name!r} exists already")
    return User(name, role)


def _check_password_rules(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise AuthError(f"the password must have at least {MIN_PASSWORD} characters")
    if not password.strip():
        raise AuthError("the password must not be only spaces")


def create_first_lead(store: Store, name: str, password: str) -> User:
    if has_accounts(store):
        raise AuthError("the first lead exists already; sign in, or ask a lead for an account")
    return add_user(store, name, "lead", password, actor=name.strip())


def authenticate(
    store: Store, name: str, password: str, now: datetime | None = None, origin: Try = BY_COMMAND
) -> User:
    """Check a password. Wrong ones slow their browser, their name and their address down
    (annotate.accounts.throttle): a try that must wait is refused unchecked, with the wait in
    the message; a browser that has not failed always has its password checked. The name is
    matched as typed, else ignoring case and how its characters are written (NFKC)."""
    now = now or datetime.now()
    row = find_account(store, name)
    # failures count against the account whatever case was typed; an unknown name by its fold
    key = row["name"] if row else fold_name(name)[: REVIEWER_NAME_CHARS + 1]
    with _TRY_LOCKS[hash(key) % len(_TRY_LOCKS)]:
        wait = try_wait(store, key, origin, now)
        if wait:
            raise AuthError(
                f"too many wrong passwords {wait[0]}: wait {say_duration(wait[1])} before the "
                "next try (a browser that has not failed can still sign in)"
            )
        # an unknown name (or one that cannot sign in) costs the same scrypt as a wrong
        # password: the time of the answer must not say whether the account exists
        stored = (row or {}).get("password_hash") or _decoy_hash()
        if not check_password(password, stored) or row is None or not row["password_hash"]:
            with store.transaction():
                sql.insert_login_failure(store, key, now, origin.browser, origin.address)
            raise AuthError("wrong user name or password")
    if not row["active"]:
        raise AuthError(f"the account {key!r} is deactivated; ask a lead")
    return User(key, row["role"])


def unlock(store: Store, name: str, actor: Actor | str | None = None) -> str:
    """A lead's way back: the name's wrong passwords so far no longer slow any try for it."""
    row = find_account(store, name)
    if row is None or row["external"]:
        raise AuthError(f"no account named {name!r} that can sign in")
    with store.transaction():
        sql.insert_unlock(store, row["name"], datetime.now(), as_actor(actor).name)
        record_act(store, actor, "account", row["name"], action="unlock")
    return str(row["name"])


def fold_name(name: str) -> str:
    """A name as it compares: NFKC, case-folded, without surrounding spaces."""
    return unicodedata.normalize("NFKC", name.strip()).casefold()


def find_account(store: Store, name: str) -> dict[str, Any] | None:
    """The account named exactly `name`, else the one whose name folds the same."""
    row = sql.user_row(store, name.strip())
    if row is not None:
        return row
    twins = [other for other, *_ in sql.all_users(store) if fold_name(other) == fold_name(name)]
    return sql.user_row(store, twins[0]) if len(twins) == 1 else None


@functools.cache
def _decoy_hash() -> str:
    return hash_password(secrets.token_hex(16))


def login_wait(store: Store, name: str, now: datetime | None = None) -> timedelta | None:
    """How long a try for `name` from a browser that has failed (or the command line) must
    still wait before its password is checked, if at all."""
    wait = try_wait(store, name.strip(), Try(), now or datetime.now())
    return wait[1] if wait else None


def session_hours(store: Store) -> float:
    value = get_setting(store, SESSION_HOURS_KEY)
    return float(value) if value is not None else DEFAULT_SESSION_HOURS


def set_session_hours(store: Store, hours: float, actor: Actor | str | None = None) -> None:
    if not 0.25 <= hours <= 24 * 30:
        raise AuthError(f"a session lasts 0.25 to 720 hours, not {hours}")
    with store.transaction():
        put_setting(store, SESSION_HOURS_KEY, str(float(hours)))
        record_act(store, actor, "setting", SESSION_HOURS_KEY, value=hours)


def start_session(store: Store, name: str) -> str:
    """A new random session token for a signed-in account; only its hash is stored."""
    token = secrets.token_urlsafe(32)
    expires = datetime.now() + timedelta(hours=session_hours(store))
    with store.transaction():
        sql.insert_session(store, _token_hash(token), name, expires)
    return token


def session_user(store: Store, token: str | None) -> User | None:
    """The account of a live session token; None when unknown, expired, revoked or inactive."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    row = sql.session_account(store, _token_hash(token), datetime.now())
    return User(row["name"], row["role"]) if row else None


def end_session(store: Store, token: str | None) -> None:
    """Log out: the token is no longer accepted anywhere."""
    if token:
        with store.transaction():
            sql.revoke_session(store, _token_hash(token), "logout")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def set_active(store: Store, name: str, active: bool, actor: Actor | str | None = None) -> str:
    """Deactivate (or reactivate) an account; its labels stay, its sessions end. The name is
    found as sign-in finds it (any case, any Unicode spelling); returns the account's name."""
    row = find_account(store, name)
    if row is None:
        raise AuthError(f"no user named {name!r}")
    name = row["name"]
    if not active and row["role"] == "lead" and not sql.other_active_leads(store, name):
        raise AuthError(
            f"{name!r} is the last active lead: nobody could then manage accounts; make another "
            "lead first (annotate user add NAME --role lead)"
        )
    with store.transaction():
        sql.update_active(store, name, active)
        if not active:
            sql.revoke_sessions_of(store, name, "deactivated")
        record_act(store, actor, "account", name, action="activate" if active else "deactivate")
    return name


def set_password(store: Store, name: str, password: str, actor: Actor | str | None = None) -> str:
    """A new password; every open session of the account ends. The name is found as sign-in
    finds it; returns the account's name."""
    row = find_account(store, name)
    if row is None or row["external"]:
        raise AuthError(f"no account named {name!r} that can sign in")
    name = row["name"]
    _check_password_rules(password)
    with store.transaction():
        sql.update_password(store, name, hash_password(password))
        sql.revoke_sessions_of(store, name, "password_changed")
        record_act(store, actor, "account", name, action="password")
    return name


def is_active_account(store: Store, name: str) -> bool:
    row = sql.user_row(store, name)
    return bool(row and row["active"] and not row["external"])


def list_users(store: Store) -> list[User]:
    return [User(*row) for row in sql.all_users(store)]


def reviewer_names(store: Store) -> list[str]:
    """Active accounts that can label, for assignment."""
    return sql.labeller_names(store)


def cli_actor(store: Store, name: str | None) -> Actor:
    """`--as NAME` must name an active account; without it, the OS user acts."""
    if name is None:
        return os_actor()
    if not name.strip():
        raise UsageError("--as needs an account name; leave --as out to act as the OS user")
    row = find_account(store, name)  # as sign-in finds it: any case, any Unicode spelling
    if row is None or row["external"]:
        raise UsageError(f"--as {name}: no account named {name!r}; see `annotate user list`")
    if not row["active"]:
        raise UsageError(f"--as {name}: the account {name!r} is deactivated")
    if row["role"] == "reviewer":  # blind to the judge and to others' labels, as in the app
        raise UsageError(
            f"--as {name}: {name!r} is a reviewer, and reviewers label in the app: no command "
            "reads or acts in a reviewer's name; use --as with a lead's or an auditor's name"
        )
    return Actor(row["name"], "cli", row["role"])
