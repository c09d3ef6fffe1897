"""Disagreements between reviewers, and the lead's final label as its own event (votes stay)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotate.errors import AnnotateError
from annotate.sampling import JUDGE_OK_LABELS
from annotate.store import Store
from annotate.store import assignments as sql
from annotate.store.labels import active_rubric


class AdjudicationError(AnnotateError):
    """An adjudication that cannot be recorded; the message says why."""


def disagreements(store: Store, sample: str, include_resolved: bool = True) -> list[dict[str, Any]]:
    """Claims whose reviewers' current labels differ, with every vote and any adjudication."""
    claims: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for vote in sql.latest_votes(store, sample):
        claims[(vote["trace_id"], vote["claim_index"])].append(vote)
    decided = {
        (a["trace_id"], a["claim_index"]): a for a in sql.latest_adjudications(store, sample)
    }
    result = []
    for (trace_id, claim_index), votes in sorted(claims.items()):
        if len({v["label"] for v in votes}) < 2:
            continue
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
    votes: dict[tuple[str, int], set[str]] = defaultdict(set)
    for vote in sql.latest_votes(store, sample):
        votes[(vote["trace_id"], vote["claim_index"])].add(vote["label"])
    gold = {key: next(iter(labels)) for key, labels in votes.items() if len(labels) == 1}
    for item in sql.latest_adjudications(store, sample):
        gold[(item["trace_id"], item["claim_index"])] = item["label"]
    return gold


def judge_disagreements(store: Store, sample: str) -> list[dict[str, Any]]:
    """Claims whose gold label and the judge's claim-level verdict differ, in binary terms."""
    _, labels = active_rubric(store)
    binary = {item["label"]: item["binary"] for item in labels}
    gold = gold_labels(store, sample)
    found = []
    for verdict in sql.sample_claim_verdicts(store, sample):
        key = (verdict["trace_id"], verdict["claim_index"])
        if key not in gold or binary.get(gold[key]) == "excluded":
            continue
        judged = binary.get(verdict["label"]) or (
            "supported" if verdict["label"] in JUDGE_OK_LABELS else "unsupported"
        )
        if judged != binary.get(gold[key]):
            found.append({**verdict, "gold": gold[key], "gold_binary": binary.get(gold[key])})
    return found
