"""The evidence agreement and calibration read from the store: votes, adjudications, claims,
and the judge's verdicts with their mapped outcomes. The gold rules are in `annotate.stats.gold`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from annotate.judge.labels import ABSTAINED, label_map
from annotate.kept import Recent
from annotate.sampling.samples import known_sample
from annotate.stats.gold import SUPPORTED, UNSUPPORTED, Evidence, judge_response_outcome
from annotate.stats.shared import sharing
from annotate.store import Store
from annotate.store import evidence as sql
from annotate.store.labels import active_rubric
from annotate.store.recent import where

# Inside `shared_evidence()` (a report: calibration, then agreement on the same scope) each
# store and sample's evidence is read once. Evidence is never changed after it is read.
_SHARED: ContextVar[dict[tuple[int, str | None], Evidence] | None] = ContextVar(
    "shared_evidence", default=None
)


@contextmanager
def shared_evidence() -> Iterator[None]:
    """Inside this block load_evidence reads each store and sample once (for work that
    changes no label while it runs, as a report)."""
    with sharing(_SHARED):
        yield


def load_evidence(store: Store, sample: str | None) -> Evidence:
    shared = _SHARED.get()
    if shared is None:
        return _recent_evidence(store, sample)
    key = (id(store), sample)
    if key not in shared:
        shared[key] = _recent_evidence(store, sample)
    return shared[key]


# The last few evidence reads of this process, by store file, change mark and sample: the
# Agreement, Calibration and Rates pages each read the same evidence on their first visit
# (0.3 s each for 10,000 labelled claims); any new label, adjudication, rubric or setting moves
# the mark (annotate.store.status.change_mark), so an entry is never older than the store.
RECENT_EVIDENCE = 4
_RECENT = Recent(RECENT_EVIDENCE)


def _recent_evidence(store: Store, sample: str | None) -> Evidence:
    """The evidence, read again only when the store moved (none kept for an in-memory store
    or inside a transaction: annotate.store.recent.where)."""
    from annotate.store.status import change_mark

    kept = where(store, change_mark)
    if kept is None:
        return _read_evidence(store, sample)
    return _RECENT.get((*kept, sample), lambda: _read_evidence(store, sample))


def _read_evidence(store: Store, sample: str | None) -> Evidence:
    if sample is not None:  # a typo is not "no labels"
        known_sample(store, sample)
    _, labels = active_rubric(store)
    votes = sql.votes(store, sample)
    adjudications = {(a["trace_id"], a["claim_index"]): a for a in sql.adjudications(store, sample)}
    traces = list(dict.fromkeys([v["trace_id"] for v in votes]))
    evidence = Evidence(sample, {i["label"]: i["binary"] for i in labels}, votes, adjudications)
    for claim in sql.claims(store, traces):
        evidence.claims.setdefault(claim["trace_id"], []).append(claim["claim_index"])
        evidence.texts[(claim["trace_id"], claim["claim_index"])] = claim["text"]
    return evidence


def judge_labels(store: Store, evidence: Evidence, judge: str, level: str) -> dict[Any, Any]:
    """unit -> the judge's verdict row at this level, with its mapped outcome added, for the
    units of labelled traces (no other unit can have gold; `judged_units` counts them all).

    At response level a trace's verdict is `judge_response_outcome` of the judge's response
    and claim verdicts (a claim-level judge has response verdicts too); none is an abstention.
    Raises UnmappedJudgeLabelError before any statistic if a label has no mapping.
    """
    outcomes = label_map(store, judge)
    if level == "response":
        return _response_verdicts(store, evidence, judge, outcomes)
    found: dict[Any, Any] = {}
    for verdict in sql.verdicts(store, evidence.sample, judge, level):
        unit = (
            (verdict["trace_id"], verdict["claim_index"])
            if level == "claim"
            else verdict["trace_id"]
        )
        found[unit] = {**verdict, "outcome": outcomes[verdict["label"]]}
    return found


def _response_verdicts(
    store: Store, evidence: Evidence, judge: str, outcomes: Mapping[str, str]
) -> dict[str, Any]:
    own = {v["trace_id"]: v for v in sql.verdicts(store, evidence.sample, judge, "response")}
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for verdict in sql.verdicts(store, evidence.sample, judge, "claim"):
        counts[verdict["trace_id"]][outcomes[verdict["label"]]] += 1
    found: dict[str, Any] = {}
    for trace in sorted({*own, *counts}):
        said = outcomes[own[trace]["label"]] if trace in own else None
        n, claims = counts[trace], len(evidence.claims.get(trace, ()))
        outcome = judge_response_outcome(said, n[UNSUPPORTED], n[SUPPORTED], claims) or ABSTAINED
        if said in (SUPPORTED, UNSUPPORTED):
            found[trace] = {**own[trace], "outcome": outcome}
            continue
        found[trace] = {
            "trace_id": trace, "level": "response", "claim_index": None, "label": outcome,
            "outcome": outcome,
            "explanation": f"from its claim verdicts: {n[UNSUPPORTED]} unsupported and "
            f"{n[SUPPORTED]} supported of {claims} claims",
        }  # fmt: skip
    return found


def judged_units(store: Store, evidence: Evidence, judge: str, level: str) -> int:
    """Every unit at `level` the judge gave a verdict on in the evidence's scope."""
    return sql.verdict_units(store, evidence.sample, judge, level)
