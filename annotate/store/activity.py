"""SQL for the activity log: who did what, when. Rows are appended, never changed.

Verdicts, skips, sign-in sessions and wrong passwords are their own append-only rows; the log
reads them beside its own.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from annotate.store import Store


def insert_act(
    store: Store, actor: str, origin: str, kind: str, subject: str | None, detail: dict[str, Any]
) -> None:
    store.execute(
        "INSERT INTO activity (acted_at, actor, origin, kind, subject, detail) VALUES (?, ?, ?, ?, ?, ?)",
        [datetime.now(), actor, origin, kind, subject, json.dumps(detail, default=str)],
    )


_ALL = (
    "SELECT acted_at, actor, origin, kind, subject, detail::VARCHAR AS detail FROM activity "
    "UNION ALL SELECT created_at, reviewer, origin, 'verdict', "
    "  trace_id || '#' || (claim_index + 1), json_object('label', label, 'event', event_id)::VARCHAR "
    "  FROM label_events "
    "UNION ALL SELECT created_at, reviewer, 'app', 'skip', "
    "  trace_id || '#' || (claim_index + 1), json_object('reason', reason)::VARCHAR FROM skip_events "
    "UNION ALL SELECT created_at, adjudicator, 'app', 'adjudication', "
    "  trace_id || '#' || (claim_index + 1), json_object('label', label, 'reason', reason)::VARCHAR "
    "  FROM adjudications "
    "UNION ALL SELECT created_at, reviewer, 'app', 'flag', "
    "  trace_id || '#' || (claim_index + 1), json_object('reason', reason)::VARCHAR FROM claim_flags "
    # sign-ins are the sessions' own rows: a session started, ended, a wrong password
    "UNION ALL SELECT created_at, name, 'app', 'sign_in', name, "
    "  json_object('expires_at', expires_at)::VARCHAR FROM auth_sessions "
    "UNION ALL SELECT revoked_at, name, 'app', 'sign_out', name, "
    "  json_object('reason', revoked_reason)::VARCHAR FROM auth_sessions WHERE revoked_at IS NOT NULL "
    "UNION ALL SELECT failed_at, name, 'app', 'sign_in_failed', name, '{}' FROM login_failures"
)


def acts(
    store: Store, actor: str | None, kind: str | None, limit: int | None
) -> list[dict[str, Any]]:
    """Oldest first; `actor` and `kind` filter when given."""
    sql = f"SELECT * FROM ({_ALL}) WHERE (? IS NULL OR actor = ?) AND (? IS NULL OR kind = ?) "
    sql += "ORDER BY acted_at, kind"
    params: list[Any] = [actor, actor, kind, kind]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    rows = store.fetch_dicts(sql, params)
    for row in rows:
        row["detail"] = json.loads(row["detail"]) if row["detail"] else {}
    return rows


def act_kinds(store: Store) -> list[str]:
    return [row[0] for row in store.fetchall(f"SELECT DISTINCT kind FROM ({_ALL}) ORDER BY 1")]


def act_actors(store: Store) -> list[str]:
    return [row[0] for row in store.fetchall(f"SELECT DISTINCT actor FROM ({_ALL}) ORDER BY 1")]
