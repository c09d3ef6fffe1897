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
