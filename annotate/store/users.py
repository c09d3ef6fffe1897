"""SQL for accounts. Passwords arrive here already hashed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from annotate.store import Store


def count_loginable(store: Store) -> int:
    return int(store.scalar("SELECT count(*) FROM users WHERE password_hash IS NOT NULL"))


def user_row(store: Store, name: str) -> dict[str, Any] | None:
    rows = store.fetch_dicts("SELECT * FROM users WHERE name = ?", [name])
    return rows[0] if rows else None


def insert_user(store: Store, name: str, role: str, password_hash: str) -> None:
    store.execute(
        "INSERT INTO users VALUES (?, ?, ?, FALSE, TRUE, ?)",
        [name, role, password_hash, datetime.now()],
    )


def promote_external(store: Store, name: str, role: str, password_hash: str) -> None:
    store.execute(
        "UPDATE users SET role = ?, password_hash = ?, external = FALSE, active = TRUE WHERE name = ?",
        [role, password_hash, name],
    )


def other_active_leads(store: Store, name: str) -> int:
    """Active leads who can sign in, `name` aside."""
    return int(
        store.scalar(
            "SELECT count(*) FROM users WHERE role = 'lead' AND active AND NOT external "
            "AND password_hash IS NOT NULL AND name <> ?",
            [name],
        )
    )


def update_active(store: Store, name: str, active: bool) -> None:
    store.execute("UPDATE users SET active = ? WHERE name = ?", [active, name])


def all_users(store: Store) -> list[tuple[str, str, bool, bool]]:
    return [
        (name, role, bool(active), bool(external))
        for name, role, active, external in store.fetchall(
            "SELECT name, role, active, external FROM users ORDER BY name"
        )
    ]


def labeller_names(store: Store) -> list[str]:
    rows = store.fetchall(
        "SELECT name FROM users WHERE active AND NOT external AND role IN ('reviewer', 'lead') ORDER BY name"
    )
    return [row[0] for row in rows]


def insert_session(store: Store, token_hash: str, name: str, expires_at: datetime) -> None:
    store.execute(
        "INSERT INTO auth_sessions (token_hash, name, created_at, expires_at) VALUES (?, ?, ?, ?)",
        [token_hash, name, datetime.now(), expires_at],
    )


def session_account(store: Store, token_hash: str, now: datetime) -> dict[str, Any] | None:
    """The account behind a live session: not revoked, not expired, active, not external."""
    rows = store.fetch_dicts(
        "SELECT u.name, u.role FROM auth_sessions s JOIN users u USING (name) "
        "WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ? "
        "AND u.active AND NOT u.external AND u.password_hash IS NOT NULL",
        [token_hash, now],
    )
    return rows[0] if rows else None


def revoke_session(store: Store, token_hash: str, reason: str) -> None:
    store.execute(
        "UPDATE auth_sessions SET revoked_at = ?, revoked_reason = ? "
        "WHERE token_hash = ? AND revoked_at IS NULL",
        [datetime.now(), reason, token_hash],
    )


def revoke_sessions_of(store: Store, name: str, reason: str) -> None:
    store.execute(
        "UPDATE auth_sessions SET revoked_at = ?, revoked_reason = ? "
        "WHERE name = ? AND revoked_at IS NULL AND expires_at > ?",  # expired ones ended already
        [datetime.now(), reason, name, datetime.now()],
    )


def update_password(store: Store, name: str, password_hash: str) -> None:
    store.execute("UPDATE users SET password_hash = ? WHERE name = ?", [password_hash, name])


def insert_login_failure(
    store: Store, name: str, at: datetime, browser: str | None = None, address: str | None = None
) -> None:
    store.execute(
        "INSERT INTO login_failures (name, failed_at, browser, address) VALUES (?, ?, ?, ?)",
        [name, at, browser, address],
    )


_FAILURE_KEYS = ("name", "browser", "address")  # the only columns a count may be keyed on


def failures_from(
    store: Store, name: str, column: str, value: str | None, since: datetime
) -> tuple[int, datetime | None]:
    """Wrong passwords with `column` = `value` after `since`, and after `name`'s last sign-in
    and last unlock (a try for `name` starts afresh from those): (count, time of the latest)."""
    if value is None or column not in _FAILURE_KEYS:
        return 0, None
    row = store.fetchone(
        f"SELECT count(*), max(failed_at) FROM login_failures WHERE {column} = ? "
        "AND failed_at > greatest(?::TIMESTAMP, "
        "coalesce((SELECT max(created_at) FROM auth_sessions WHERE name = ?), ?::TIMESTAMP), "
        "coalesce((SELECT max(unlocked_at) FROM login_unlocks WHERE name = ?), ?::TIMESTAMP))",
        [value, since, name, since, name, since],
    )
    return (int(row[0]), row[1]) if row else (0, None)


def insert_unlock(store: Store, name: str, at: datetime, by: str) -> None:
    store.execute("INSERT INTO login_unlocks VALUES (?, ?, ?)", [name, at, by])
