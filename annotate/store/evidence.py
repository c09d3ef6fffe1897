"""SQL for agreement and calibration: current votes, adjudications, judge verdicts, claims.

`sample=None` means every labelled trace in the store; otherwise the traces of that sample.
Only current claims count: labels and adjudications of a claim a lead replaced by a new version
(store/claims.py, retired_claims) stay in the ledger but are no evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotate.store import Store, id_batch
from annotate.store.reveals import BLIND_EVENT


def _scope(alias: str, sample: str | None) -> tuple[str, list[Any]]:
    if sample is None:
        return "", []
    return (
        f" JOIN (SELECT DISTINCT trace_id FROM sample_units WHERE sample = ?) s "
        f"ON s.trace_id = {alias}.trace_id",
        [sample],
    )


_CURRENT = "SEMI JOIN claims c ON c.trace_id = {a}.trace_id AND c.claim_index = {a}.claim_index "


def _current_votes(sample: str | None) -> tuple[str, list[Any]]:
    """The SELECT of each reviewer's current label of each claim (votes' rows, unordered)."""
    join, params = _scope("e", sample)
    return (
        "SELECT e.trace_id, e.claim_index, e.reviewer, arg_max(e.label, e.event_id) AS label, "
        "arg_max(e.error_type, e.event_id) AS error_type, arg_max(e.note, e.event_id) AS note, "
        "max(e.created_at) AS created_at "
        f"FROM label_events e{join} {_CURRENT.format(a='e')}WHERE {BLIND_EVENT.format(a='e')} "
        "GROUP BY e.trace_id, e.claim_index, e.reviewer",
        params,
    )


# A disagreement: a claim whose reviewers' current labels are not all the same.
_DISAGREEING = (
    "SELECT trace_id, claim_index FROM current GROUP BY trace_id, claim_index "
    "HAVING count(DISTINCT label) > 1"
)


def votes(store: Store, sample: str | None, disagreeing: bool = False) -> list[dict[str, Any]]:
    """Each reviewer's current label of each claim (their latest event made blind to the judge:
    annotate.labelling.blind), with when it was given; with `disagreeing`, of the claims whose
    reviewers' labels differ only."""
    select, params = _current_votes(sample)
    only = f"WHERE (trace_id, claim_index) IN ({_DISAGREEING}) " if disagreeing else ""
    return store.fetch_dicts(
        f"WITH current AS ({select}) SELECT * FROM current {only}"
        "ORDER BY trace_id, claim_index, reviewer",
        params,
    )


def open_disagreements(store: Store, sample: str | None) -> int:
    """How many claims' reviewers disagree with no adjudication yet: counted in DuckDB (a
    lead's Home asks on every visit; reading every vote into Python took 0.2 s at 10,000
    labelled claims)."""
    select, params = _current_votes(sample)
    join, scope = _scope("a", sample)
    return int(
        store.scalar(
            f"WITH current AS ({select}) SELECT count(*) FROM ({_DISAGREEING}) d "
            "WHERE (d.trace_id, d.claim_index) NOT IN (SELECT a.trace_id, a.claim_index "
            f"FROM adjudications a{join} {_CURRENT.format(a='a')})",
            [*params, *scope],
        )
    )


def adjudications(store: Store, sample: str | None) -> list[dict[str, Any]]:
    join, params = _scope("a", sample)
    return store.fetch_dicts(
        "SELECT a.trace_id, a.claim_index, arg_max(a.label, a.event_id) AS label, "
        "arg_max(a.error_type, a.event_id) AS error_type, arg_max(a.reason, a.event_id) AS reason, "
        "arg_max(a.adjudicator, a.event_id) AS adjudicator "
        f"FROM adjudications a{join} {_CURRENT.format(a='a')}GROUP BY a.trace_id, a.claim_index",
        params,
    )


def verdicts(store: Store, sample: str | None, judge: str, level: str) -> list[dict[str, Any]]:
    """The judge's verdicts at `level` on labelled traces (only they can have gold); the first
    stored one per unit. The join runs in DuckDB: the cost follows the labels, not the store."""
    join, params = _scope("v", sample)
    # Current claims of labelled traces only: tested against every claim, the EXISTS built a
    # hash table of the whole claims table (about 140 MB more at 1M traces).
    return store.fetch_dicts(
        "WITH labelled AS (SELECT DISTINCT trace_id FROM label_events), "
        "current AS (SELECT c.trace_id, c.claim_index FROM claims c "
        "  SEMI JOIN labelled l ON l.trace_id = c.trace_id) "
        "SELECT v.trace_id, v.level, v.claim_index, first(v.label) AS label, "
        "first(v.explanation) AS explanation "
        f"FROM judge_verdicts v{join} SEMI JOIN labelled l ON l.trace_id = v.trace_id "
        "WHERE v.judge = ? AND v.level = ? "
        "AND (v.level <> 'claim' OR EXISTS (SELECT 1 FROM current c "
        "     WHERE c.trace_id = v.trace_id AND c.claim_index = v.claim_index)) "
        "GROUP BY v.trace_id, v.level, v.claim_index ORDER BY v.trace_id, v.claim_index",
        [*params, judge, level],
    )


def verdict_units(store: Store, sample: str | None, judge: str, level: str) -> int:
    """How many units at `level` the judge gave a verdict on, labelled or not; a response
    the judge judged only claim by claim counts at response level."""
    join, params = _scope("v", sample)
    unit, levels = ("v.claim_index", "= 'claim'") if level == "claim" else ("0", "IS NOT NULL")
    return int(
        store.scalar(
            f"SELECT count(*) FROM (SELECT DISTINCT v.trace_id, {unit} "
            f"FROM judge_verdicts v{join} WHERE v.judge = ? AND v.level {levels})",
            [*params, judge],
        )
    )


def claims(store: Store, trace_ids: Sequence[str]) -> list[dict[str, Any]]:
    if not trace_ids:
        return []
    rows = store.fetch_with_batch(
        "SELECT c.trace_id, c.claim_index, c.text FROM claims c JOIN _batch USING (trace_id) "
        "ORDER BY c.trace_id, c.claim_index",
        id_batch(trace_ids),
    )
    return [{"trace_id": t, "claim_index": i, "text": text} for t, i, text in rows]


def label_times(store: Store, sample: str | None) -> list[tuple[str, Any]]:
    """(reviewer, created_at) of every label event, in time order per reviewer."""
    join, params = _scope("e", sample)
    return store.fetchall(
        f"SELECT e.reviewer, e.created_at FROM label_events e{join} ORDER BY e.reviewer, e.created_at",
        params,
    )


def strata(store: Store, sample: str | None) -> dict[str, Any]:
    """trace -> its stratum in `sample` (the bootstrap resamples traces within strata)."""
    if sample is None:
        return {}
    rows = store.fetchall(
        "SELECT trace_id, first(stratum_key) FROM sample_units WHERE sample = ? GROUP BY trace_id",
        [sample],
    )
    return dict(rows)
