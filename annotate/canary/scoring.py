"""Import replayed responses of a suite and score them: followed the context, leaked world
knowledge, both, or neither; pass rates with Wilson intervals per attribute.

A replayed response is a trace in the generic format with its canary id as an attribute; it
is imported by the one importer (bad rows by line, one transaction). A "neither" response
joins the suite's labelling sample with the whole response as its claim (when it brings no
claims), is labelled blind like any claim, and its gold decides it: supported (the response
rests on the fictive context) passes, unsupported fails, no gold yet is pending.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.canary.matching import has_value, read_response
from annotate.canary.suite import suite as suite_row
from annotate.ingest.importer import ImportReport, import_traces
from annotate.labelling.evidence import load_evidence
from annotate.stats.gold import SUPPORTED, UNSUPPORTED, response_gold
from annotate.stats.intervals import proportion
from annotate.store import Store
from annotate.store import canary as sql
from annotate.store.assignments import slice_values
from annotate.store.claims import insert_claims
from annotate.store.samples import sample_row
from annotate.traces import RowError, Trace

OUTCOMES = ("followed", "leak", "both", "neither")
NO_VALUE = "(none)"


def outcome(checks: list[dict[str, Any]], response: str) -> str:
    """followed (a fictive value is there), leak (an original one), both, or neither."""
    found = read_response(response)
    followed = any(has_value(found, c, "fictive") for c in checks)
    leaked = any(has_value(found, c, "original") for c in checks)
    if followed and leaked:
        return "both"
    return "followed" if followed else "leak" if leaked else "neither"


def is_pass(result: str, verdict: str | None = None) -> bool | None:
    """Pass = followed and no leak; a "neither" passes or fails by its gold (None: pending)."""
    if result == "neither":
        return None if verdict is None else verdict == SUPPORTED
    return result == "followed"


def import_responses(
    store: Store,
    name: str,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    actor: Actor | str | None = None,
) -> tuple[ImportReport, dict[str, int]]:
    """Import a file of replayed responses into suite `name`; rows with an unknown or missing
    canary id are rejected by line, the rest scored; one transaction. (report, outcome counts)"""
    suite = suite_row(store, name)
    checks = {item["canary_id"]: item["checks"] for item in sql.items(store, name)}
    who = as_actor(actor)
    with store.transaction():
        report = import_traces(store, path, fmt, actor=who, check=_known_id(name, checks))
        rows = sql.imported_traces(store, report.import_id)
        for row in rows:
            row["outcome"] = outcome(checks[row["canary_id"]], row["response"])
            row["import_id"] = report.import_id
        sql.add_responses(store, name, rows)
        neither = [row for row in rows if row["outcome"] == "neither"]
        insert_claims(store, [_whole_response(row) for row in neither])
        sql.add_to_queue(store, suite, [row["trace_id"] for row in neither], who.name)
        tally = Counter(row["outcome"] for row in rows)
        counts = {key: tally.get(key, 0) for key in OUTCOMES}
        record_act(
            store, who, "canary", name, action="import", import_id=report.import_id, **counts
        )
    return report, counts


def _known_id(name: str, checks: dict[str, Any]) -> Any:
    def check(trace: Trace) -> list[RowError]:
        canary_id = trace.attributes.get("canary_id")
        if canary_id is None:
            message = 'is missing; give each response the "canary_id" of the suite row it answers'
        elif canary_id not in checks:
            message = f"{str(canary_id)[:100]!r} is not an item of suite {name!r}; check the file is a replay of this suite"
        else:
            return []
        return [RowError(trace.line, "attributes.canary_id", message)]

    return check


def _whole_response(row: dict[str, Any]) -> dict[str, Any]:
    text = row["response"]
    return {
        "trace_id": row["trace_id"],
        "claim_index": 0,
        "text": text,
        "start_offset": 0,
        "end_offset": len(text),
        "origin": "canary",
    }


def score(store: Store, name: str, by: list[str] | None = None) -> dict[str, Any]:
    """Pass rates per group of the `by` columns or attributes (none: one overall row)."""
    suite = suite_row(store, name)
    by = [column.strip() for column in by or [] if column.strip()]
    responses = sql.responses(store, name)
    queue = suite["queue_sample"]  # made when the first 'neither' response is imported
    gold = response_gold(load_evidence(store, queue)) if sample_row(store, queue) else {}
    values = slice_values(store, [r["trace_id"] for r in responses], by)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for response in responses:
        found = values.get(response["trace_id"], {})
        key = tuple(_text(found.get(column)) for column in by)
        groups[key].append({**response, "verdict": gold.get(response["trace_id"])})
    rows = [
        _row(dict(zip(by, key, strict=True)), members) for key, members in sorted(groups.items())
    ]
    return {"suite": name, "by": by, "rows": rows}


def _text(value: Any) -> str:
    return NO_VALUE if value is None else value if isinstance(value, str) else json.dumps(value)


def _row(group: dict[str, str], members: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(m["outcome"] for m in members)
    decisions = [is_pass(m["outcome"], m["verdict"]) for m in members]
    decided = [d for d in decisions if d is not None]
    stat = proportion(sum(decided), len(decided), "no decided responses yet")
    neither = [m for m in members if m["outcome"] == "neither"]
    return {
        "group": group,
        "n": len(members),
        **{name: counts.get(name, 0) for name in OUTCOMES},
        "neither_supported": sum(m["verdict"] == SUPPORTED for m in neither),
        "neither_unsupported": sum(m["verdict"] == UNSUPPORTED for m in neither),
        "pending": decisions.count(None),
        "pass_rate": stat.value,
        "low": stat.low,
        "high": stat.high,
        "method": stat.method or stat.reason,
    }


def response_rows(store: Store, name: str) -> list[dict[str, Any]]:
    """Each scored response with its outcome, for the page's table."""
    suite_row(store, name)
    return [
        {"canary_id": r["canary_id"], "trace_id": r["trace_id"], "outcome": r["outcome"]}
        for r in sql.responses(store, name)
    ]
