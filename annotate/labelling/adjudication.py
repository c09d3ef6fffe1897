"""Disagreements between reviewers, and the lead's final label as its own event (votes stay)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotate.errors import AnnotateError
from annotate.judge.labels import mapping_rows
from annotate.labelling.evidence import load_evidence
from annotate.stats.gold import EXCLUDED, claim_gold
from annotate.store import Store, evidence
from annotate.store import assignments as sql
from annotate.store.labels import active_rubric


class AdjudicationError(AnnotateError):
    """An adjudication that cannot be recorded; the message says why."""


def disagreements(store: Store, sample: str, include_resolved: bool = True) -> list[dict[str, Any]]:
    """Claims whose reviewers' current labels differ, with every vote and any adjudication."""
    claims: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for vote in evidence.votes(store, sample, disagreeing=True):
        claims[(vote["trace_id"], vote["claim_index"])].append(vote)
    decided = {(a["trace_id"], a["claim_index"]): a for a in evidence.adjudications(store, sample)}
    result = []
    for (trace_id, claim_index), votes in sorted(claims.items()):
        adjudication = decided.get((trace_id, claim_index))
        if adjudication and not include_resolved:
            continue
        result.append(
            {
                "trace_id": trace_id,
                "claim_index": claim_index,
                "votes": votes,
                "adjudication": adjudication,
            }
        )
    return result


def adjudicate(
    store: Store,
    lead: str,
    trace_id: str,
    claim_index: int,
    label: str,
    reason: str,
    error_type: str | None = None,
) -> None:
    version, labels = active_rubric(store)
    names = [item["label"] for item in labels]
    if label not in names:
        raise AdjudicationError(
            f"{label!r} is not in the active rubric; use one of: {', '.join(names)}"
        )
    if not reason.strip():
        raise AdjudicationError("give a reason for the final label: auditors read it")
    with store.transaction():
        sql.insert_adjudication(
            store,
            {
                "trace_id": trace_id,
                "claim_index": claim_index,
                "adjudicator": lead,
                "label": label,
                "error_type": error_type,
                "reason": reason.strip(),
                "rubric_version": version,
            },
        )


def gold_labels(store: Store, sample: str) -> dict[tuple[str, int], str]:
    """Adjudicated label if any, else the label every reviewer gave; disagreement: no gold."""
    gold = claim_gold(load_evidence(store, sample))
    return {key: g.full for key, g in gold.items() if g.full is not None}


def judge_disagreements(store: Store, sample: str) -> list[dict[str, Any]]:
    """Claims whose gold and the judges' claim-level verdicts differ, in binary terms."""
    evidence = load_evidence(store, sample)
    gold = claim_gold(evidence)
    # The stored mapping; abstentions and labels no lead has mapped are not disagreements.
    outcomes = {(r["judge"], r["label"]): r["outcome"] for r in mapping_rows(store)}
    found = []
    for verdict in sql.sample_claim_verdicts(store, sample):
        claim = gold.get((verdict["trace_id"], verdict["claim_index"]))
        if claim is None or claim.binary in (None, EXCLUDED):
            continue
        outcome = outcomes.get((verdict["judge"], verdict["label"]))
        if outcome in ("supported", "unsupported") and outcome != claim.binary:
            found.append(
                {**verdict, "gold": claim.full or claim.binary, "gold_binary": claim.binary}
            )
    return found
