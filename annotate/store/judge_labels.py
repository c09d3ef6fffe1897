"""SQL for the judge label mapping: the labels each judge used, and the mapping leads saved.

Rows are appended, never updated: the current mapping of (judge, label) is its latest row.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from annotate.store import Store
from annotate.store.frame_verdicts import UNDRAWN_LABELS


def used_labels(store: Store, judge: str | None = None) -> list[dict[str, Any]]:
    """Each (judge, label) in judge_verdicts with its number of verdicts, and those of the
    frame traces source samples left in the files (store.frame_verdicts)."""
    where, params = ("WHERE judge = ? ", [judge]) if judge is not None else ("", [])
    return store.fetch_dicts(
        "SELECT judge, label, CAST(sum(verdicts) AS BIGINT) AS verdicts FROM (SELECT judge, "
        f"label, count(*) AS verdicts FROM judge_verdicts GROUP BY ALL UNION ALL {UNDRAWN_LABELS}) "
        f"{where}GROUP BY judge, label ORDER BY judge, label",
        params,
    )


def saved_mapping(store: Store, judge: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """(judge, label) -> the latest saved {outcome, set_by, set_at}."""
    where, params = ("WHERE judge = ? ", [judge]) if judge is not None else ("", [])
    rows = store.fetch_dicts(
        "SELECT judge, label, arg_max(outcome, id) AS outcome, arg_max(set_by, id) AS set_by, "
        f"max(set_at) AS set_at FROM judge_label_map {where}GROUP BY judge, label",
        params,
    )
    return {(r["judge"], r["label"]): r for r in rows}


def save_mapping(store: Store, judge: str, label: str, outcome: str, user: str) -> None:
    store.execute(
        "INSERT INTO judge_label_map (judge, label, outcome, set_by, set_at) VALUES (?, ?, ?, ?, ?)",
        [judge, label, outcome, user, datetime.now(UTC).replace(tzinfo=None)],
    )
