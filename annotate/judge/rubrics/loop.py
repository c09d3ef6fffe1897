"""The lead's loop: versions side by side on the same held-out claims, the claims whose verdict
flipped, few-shot candidates (adjudicated tuning claims, past judge errors first), and marking
a version calibrated for the slices where it meets the readiness thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.errors import UsageError
from annotate.judge.rubrics.card import (
    REPETITIONS,
    build_card,
    judge_calibration,
    ready_slices,
    rubric_judge,
)
from annotate.judge.rubrics.prompt import context_text
from annotate.judge.rubrics.split import HELD_OUT, TUNING
from annotate.labelling.evidence import judge_labels, load_evidence
from annotate.stats.gold import claim_gold
from annotate.store import Store
from annotate.store import judge_runs as run_sql
from annotate.store import rubrics as sql
from annotate.store.assignments import judge_names


def rubric_judges(store: Store) -> list[str]:
    return [j for j in judge_names(store) if rubric_judge(j) is not None]


def _outcomes(store: Store, judge: str, sample: str) -> dict[tuple[str, int], str]:
    judged = judge_labels(store, load_evidence(store, sample), judge, "claim")
    return {unit: verdict["outcome"] for unit, verdict in judged.items()}


def compare(
    store: Store,
    judges: Sequence[str],
    sample: str,
    part: str = HELD_OUT,
    repetitions: int = REPETITIONS,
) -> dict[str, Any]:
    """Each judge's statistics on the claims every one of them judged (the same claims as
    `compare_versions`, which adds the paired differences for two), and for two the flips."""
    from annotate.judge.rubrics.compare import common_units, flips_of, version_statistics

    evidence = load_evidence(store, sample)
    gold = {u: g.binary for u, g in claim_gold(evidence).items()}
    units, outcomes = common_units(store, judges, sample, part, evidence, gold)
    rows = [version_statistics(store, j, sample, set(units), 0, repetitions) for j in judges]
    flips = []
    if len(judges) == 2:
        flips = flips_of(units, outcomes, judges[0], judges[1], gold, evidence.texts)
    return {"sample": sample, "part": part, "claims": len(units), "judges": rows, "flips": flips}


def few_shot_candidates(
    store: Store, sample: str, judge: str | None = None
) -> list[dict[str, Any]]:
    """Adjudicated claims of the tuning part with their context excerpt and gold; those the judge
    got wrong first."""
    evidence = load_evidence(store, sample)
    gold = claim_gold(evidence)
    tuning = {u for u, p in sql.split_rows(store, sample).items() if p == TUNING}
    wrong: set = set()
    if judge:
        outcomes = _outcomes(store, judge, sample)
        wrong = {
            u for u, o in outcomes.items() if u in gold and o not in ("abstained", gold[u].binary)
        }
    units = sorted(u for u in tuning if u in evidence.adjudications and u in gold)
    material = run_sql.judge_material(store, sorted({t for t, _ in units}))
    found = []
    for unit in sorted(units, key=lambda u: (u not in wrong, u)):
        trace = material[unit[0]]
        found.append({
            "trace_id": unit[0], "claim_index": unit[1], "claim": trace["claims"].get(unit[1], ""),
            "context_excerpt": context_text(trace)[:1200], "label": gold[unit].full,
            "error_type": gold[unit].error_type, "judge_error": unit in wrong,
            "why": evidence.adjudications[unit].get("reason"),
        })  # fmt: skip
    return found


def mark_calibrated(
    store: Store, judge: str, sample: str, by: Sequence[str] = ("feature",),
    actor: Actor | str | None = None, repetitions: int = REPETITIONS,
) -> dict[str, Any]:  # fmt: skip
    """Mark the judge's rubric version calibrated for the slices meeting readiness (held-out).

    Always returns the card; a judge ready on no slice is an outcome, not an error: nothing is
    marked, `id` is None, `slices` is empty and `not_ready_reason` says why."""
    found = rubric_judge(judge)
    if found is None:
        raise UsageError(
            f"{judge!r} is not one of our judges (rubric-vN:model); run `annotate judge`"
        )
    card = build_card(store, judge, sample, by, repetitions=repetitions)
    slices = ready_slices(card)
    if not slices:
        return {"id": None, "slices": [], "card": card}
    who = as_actor(actor)
    with store.transaction():
        mark = sql.insert_calibration(store, {
            "rubric_version": found[0], "judge": judge, "sample": sample,
            "fingerprint": card["fingerprint"], "slices": slices, "card": card, "marked_by": who.name,
        })  # fmt: skip
        record_act(store, who, "rubric", f"rubric v{found[0]}", calibrated=slices, judge=judge)
    return {"id": mark, "slices": slices, "card": card}


def not_ready_reason(result: Mapping[str, Any]) -> str | None:
    """Why `mark_calibrated` marked nothing and what to do; None when it marked a slice."""
    if result["slices"]:
        return None
    card = result["card"]
    return (
        f"nothing marked: {card['judge']} meets the readiness thresholds on no slice of the "
        f"held-out part of {card['sample']!r} ({card[HELD_OUT]['readiness']['verdict']}); "
        "label more claims of the sample (more held-out gold narrows the intervals), revise the "
        "rubric and judge again, or change the thresholds (the Calibration page, or "
        f"`annotate calibration --judge {card['judge']} --min-kappa K --min-sensitivity S`)"
    )


def calibrated_marks(store: Store, version: int | None = None) -> list[dict[str, Any]]:
    return sql.calibrations(store, version)


def disagreements_on_tuning(store: Store, judge: str, sample: str) -> list[dict[str, Any]]:
    document = judge_calibration(store, judge, sample, TUNING, repetitions=200)
    return document["disagreements"]
