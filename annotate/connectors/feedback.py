"""What a sample sends back to a tracing server, before any server is named: per labelled
trace the reviewers' gold at response level (its unsupported claims with their labels and
error types, the reviewers, the adjudications, the notes) and our judge's response outcome;
for the sample, its calibration card. The gold and outcome rules are annotate.stats.gold's
and the rates' (one definition); this module only gathers and words them."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from annotate.agreement.calibration import calibration
from annotate.judge.rubrics.card import CARD_STATISTICS
from annotate.judge.rubrics.render import number
from annotate.labelling.evidence import load_evidence
from annotate.rates.inputs import load_inputs
from annotate.stats.gold import SUPPORTED, UNSUPPORTED, ClaimGold, claim_gold, response_gold

GOLD = "annotate.gold"
JUDGE = "annotate.judge"
CARD = "annotate.calibration_card"
CARD_RESAMPLES = 1000


@dataclass(frozen=True)
class Verdict:
    """One response-level verdict of one of our traces, for any server."""

    trace_id: str
    name: str  # GOLD | JUDGE
    kind: str  # HUMAN | LLM
    label: str
    score: float | None  # share of the trace's claims unsupported
    explanation: str
    source_id: str  # reviewers (comma-separated) or the judge's name
    metadata: dict[str, str]


def sample_verdicts(store: Any, sample: str, judge: str | None = None) -> list[Verdict]:
    """The reviewers' gold of each trace with one, then the judge's outcome of each trace."""
    evidence = load_evidence(store, sample)
    claims = claim_gold(evidence)
    by_trace: dict[str, dict[int, ClaimGold]] = defaultdict(dict)
    for (trace, index), gold in claims.items():
        by_trace[trace][index] = gold
    votes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for vote in evidence.votes:
        votes[vote["trace_id"]].append(vote)
    found = [
        gold_verdict(sample, trace, outcome, by_trace[trace], votes[trace], evidence)
        for trace, outcome in sorted(response_gold(evidence).items())
    ]
    return found + judge_verdicts(store, sample, judge)


def gold_verdict(
    sample: str,
    trace: str,
    outcome: str,
    golds: Mapping[int, ClaimGold],
    votes: list[dict[str, Any]],
    evidence: Any,
) -> Verdict:
    judged = [g for g in golds.values() if g.binary in (SUPPORTED, UNSUPPORTED)]
    unsupported = [
        {"claim": evidence.texts.get((trace, i), ""), "label": g.full, "error_type": g.error_type}
        for i, g in sorted(golds.items())
        if g.binary == UNSUPPORTED
    ]
    reviewers = sorted({str(v["reviewer"]) for v in votes})
    notes = [
        {
            "reviewer": v["reviewer"],
            "claim": evidence.texts.get((trace, v["claim_index"]), ""),
            "note": v["note"],
        }
        for v in votes
        if v.get("note")
    ]
    adjudications = [
        {
            "claim": evidence.texts.get(key, ""),
            "label": a["label"],
            "by": a["adjudicator"],
            "reason": a["reason"],
        }
        for key, a in sorted(evidence.adjudications.items())
        if key[0] == trace
    ]
    share = len(unsupported) / len(judged) if judged else None
    return Verdict(
        trace, GOLD, "HUMAN", outcome, share,
        gold_explanation(len(judged), unsupported, notes, adjudications), ",".join(reviewers),
        {
            "sample": sample,
            "reviewers": ",".join(reviewers),
            "unsupported_claims": json.dumps(unsupported, ensure_ascii=False),
            "error_types": ",".join(sorted({u["error_type"] for u in unsupported if u["error_type"]})),
            "adjudications": json.dumps(adjudications, ensure_ascii=False),
            "notes": json.dumps(notes, ensure_ascii=False),
        },
    )  # fmt: skip


def gold_explanation(
    judged: int,
    unsupported: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    adjudications: list[dict[str, Any]],
) -> str:
    """The gold in words, for the tool's UI: the unsupported claims, adjudications, notes."""
    lines = [f"{len(unsupported)} of {judged} claims unsupported (reviewers' gold, annotate)"]
    for claim in unsupported:
        lines.append(
            f"- {claim['claim']} [{claim['label']}; error type: {claim['error_type'] or 'none given'}]"
        )
    for made in adjudications:
        lines.append(
            f"Adjudicated by {made['by']}: {made['claim']} -> {made['label']} ({made['reason'] or 'no reason given'})"
        )
    for note in notes:
        lines.append(f'Note by {note["reviewer"]} on "{note["claim"]}": {note["note"]}')
    return "\n".join(lines)


def judge_verdicts(store: Any, sample: str, judge: str | None) -> list[Verdict]:
    """The judge's response outcome on each sampled trace it judged (the rates' columns)."""
    inputs = load_inputs(store, sample, (), judge)
    if inputs.judge is None:
        return []
    frame = inputs.frame
    sampled = frame[frame["trace_id"].isin(inputs.units["trace_id"])].dropna(subset=["jr"])
    found = []
    for row in sampled.to_dict("records"):
        share = float(row["jcu"]) / float(row["jcn"]) if row["jcn"] else None
        label = UNSUPPORTED if row["jr"] else SUPPORTED
        explanation = (
            f"judge {inputs.judge}: {int(row['jcu'])} of {int(row['jcn'])} claims unsupported, "
            "through its label mapping (annotate)"
        )
        meta = {"sample": sample, "judge": inputs.judge}
        found.append(
            Verdict(
                str(row["trace_id"]), JUDGE, "LLM", label, share, explanation, inputs.judge, meta
            )
        )
    return found


def calibration_card(
    store: Any, sample: str, judge: str | None
) -> tuple[str, dict[str, Any]] | None:
    """The sample's card for the judge (claim level): its text and its numbers; None when
    there is no judge to calibrate."""
    judge = load_inputs(store, sample, (), judge).judge
    if judge is None:
        return None
    document = calibration(store, judge, sample, repetitions=CARD_RESAMPLES)
    numbers = {name: document.get(name) for name in CARD_STATISTICS}
    card = {"sample": sample, "judge": judge, "level": "claim", "n": document.get("n"), **numbers,
            "readiness": document["readiness"]}  # fmt: skip
    return card_text(card), card


def card_text(card: Mapping[str, Any]) -> str:
    lines = [
        f"annotate calibration card: judge {card['judge']} on sample {card['sample']} ({card['n']} claims with gold; positive = unsupported)"
    ]
    for name in CARD_STATISTICS:
        stat = card.get(name) or {}
        interval = f"[{number(stat.get('low'))}, {number(stat.get('high'))}]"
        lines.append(
            f"- {name}: {number(stat.get('value'))} {interval} ({stat.get('method', 'interval')})"
        )
    lines.append(f"- readiness: {card['readiness']['verdict']}")
    lines.append(json.dumps(card, sort_keys=True, default=str))
    return "\n".join(lines)
