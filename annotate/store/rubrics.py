"""SQL for rubric versions, the held-out split and calibrated marks.

Rubric versions are inserted, never updated: editing makes a new row. The split of a sample
is drawn once; claims labelled later are added with the same rule, never moved.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from annotate.store import Store
from annotate.store.assignments import get_setting, put_setting

CURRENT_KEY = "rubric_current"


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _row(raw: dict[str, Any]) -> dict[str, Any]:
    raw["labels"] = json.loads(raw["labels"])
    raw["spec"] = json.loads(raw["spec"]) if raw.get("spec") else {}
    return raw


def rubric_rows(store: Store) -> list[dict[str, Any]]:
    rows = store.fetch_dicts(
        "SELECT version, name, labels, spec, parent, note, content_hash, created_at, created_by "
        "FROM rubrics ORDER BY version"
    )
    return [_row(r) for r in rows]


def rubric_row(store: Store, version: int) -> dict[str, Any] | None:
    rows = store.fetch_dicts(
        "SELECT version, name, labels, spec, parent, note, content_hash, created_at, created_by "
        "FROM rubrics WHERE version = ?",
        [version],
    )
    return _row(rows[0]) if rows else None


def version_with_hash(store: Store, content_hash: str) -> int | None:
    found = store.scalar(
        "SELECT min(version) FROM rubrics WHERE content_hash = ?",
        [content_hash],
    )
    return int(found) if found is not None else None


def insert_rubric(store: Store, row: dict[str, Any]) -> int:
    """A new version (max + 1); never replaces one. Its labels stay those reviewers use."""
    version = int(store.scalar("SELECT coalesce(max(version), 0) + 1 FROM rubrics"))
    store.execute(
        "INSERT INTO rubrics (version, name, labels, active, created_at, created_by, spec, parent, "
        "note, content_hash) VALUES (?, ?, ?, FALSE, ?, ?, ?, ?, ?, ?)",
        [
            version,
            row["name"],
            json.dumps(row["labels"]),
            _now(),
            row["created_by"],
            json.dumps(row["spec"]),
            row.get("parent"),
            row.get("note"),
            row["content_hash"],
        ],
    )
    return version


def current_version(store: Store) -> int:
    saved = get_setting(store, CURRENT_KEY)
    if saved:
        return int(json.loads(saved))
    return int(store.scalar("SELECT max(version) FROM rubrics WHERE active") or 1)


def set_current_version(store: Store, version: int) -> None:
    put_setting(store, CURRENT_KEY, json.dumps(version))


# --- the held-out split -------------------------------------------------------------------


def split_rows(store: Store, sample: str) -> dict[tuple[str, int], str]:
    rows = store.fetchall(
        "SELECT trace_id, claim_index, part FROM rubric_splits WHERE sample = ?", [sample]
    )
    return {(t, int(i)): part for t, i, part in rows}


def split_seed(store: Store, sample: str) -> int | None:
    found = store.scalar("SELECT min(seed) FROM rubric_splits WHERE sample = ?", [sample])
    return int(found) if found is not None else None


def insert_split(
    store: Store, sample: str, seed: int, parts: Sequence[tuple[str, int, str]]
) -> None:
    if not parts:
        return
    now = _now()
    table = pa.table(
        {
            "sample": [sample] * len(parts),
            "trace_id": [p[0] for p in parts],
            "claim_index": pa.array([p[1] for p in parts], pa.int32()),
            "part": [p[2] for p in parts],
            "seed": pa.array([seed] * len(parts), pa.int64()),
            "created_at": pa.array([now] * len(parts), pa.timestamp("us")),
        }
    )
    store.insert_arrow(
        "rubric_splits",
        ["sample", "trace_id", "claim_index", "part", "seed", "created_at"],
        table,
    )


def labelled_claims(store: Store, sample: str) -> list[dict[str, Any]]:
    """Claims of the sample's traces that some reviewer labelled, with the trace's feature."""
    return store.fetch_dicts(
        "SELECT DISTINCT c.trace_id, c.claim_index, t.feature FROM claims c "
        "JOIN traces t USING (trace_id) "
        "JOIN (SELECT DISTINCT trace_id FROM sample_units WHERE sample = ?) s USING (trace_id) "
        "JOIN (SELECT DISTINCT trace_id, claim_index FROM label_events) e "
        "USING (trace_id, claim_index) ORDER BY c.trace_id, c.claim_index",
        [sample],
    )


# --- calibrated marks -----------------------------------------------------------------------


def insert_calibration(store: Store, row: dict[str, Any]) -> int:
    found = store.fetchone(
        "INSERT INTO rubric_calibrations (rubric_version, judge, sample, fingerprint, slices, card, "
        "marked_by, marked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [
            row["rubric_version"],
            row["judge"],
            row["sample"],
            row["fingerprint"],
            json.dumps(row["slices"]),
            json.dumps(row["card"], default=str),
            row["marked_by"],
            _now(),
        ],
    )
    return int(found[0]) if found else 0


def calibrations(store: Store, version: int | None = None) -> list[dict[str, Any]]:
    where, params = ("WHERE rubric_version = ? ", [version]) if version is not None else ("", [])
    rows = store.fetch_dicts(
        "SELECT id, rubric_version, judge, sample, fingerprint, slices, card, marked_by, marked_at "
        f"FROM rubric_calibrations {where}ORDER BY id",
        params,
    )
    for row in rows:
        row["slices"] = json.loads(row["slices"])
        row["card"] = json.loads(row["card"])
    return rows
