"""The calibration card of a rubric judge: labelled claims, reviewers, their agreement, the
judge against gold (sensitivity, specificity, kappa with intervals, overall and per slice,
readiness per slice) on the held-out part, the tuning part beside it, pinned to a fingerprint.

Every number comes from the functions the Calibration page calls (agreement.calibration and
agreement.reliability), so the card and the page cannot disagree.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from annotate.agreement.calibration import EPSILON, calibration, load_thresholds
from annotate.agreement.reliability import agreement
from annotate.judge.rubrics import prompt
from annotate.judge.rubrics.runner import few_shot_units
from annotate.judge.rubrics.split import HELD_OUT, PARTS, TUNING, ensure_split
from annotate.judge.rubrics.versions import Rubric, RubricError, current_version, get_rubric
from annotate.store import Store

CARD_STATISTICS = ("sensitivity", "specificity", "cohen_kappa")
_JUDGE = re.compile(r"^rubric-v(?P<version>\d+):(?P<model>.+)$")
STALE = "stale: recalibrate"
# Bootstrap resamples of cards and comparisons: the Calibration page's and the CLI's default,
# so the same judge on the same claims gets the same intervals everywhere.
REPETITIONS = 1000


def rubric_judge(judge: str) -> tuple[int, str] | None:
    """(rubric version, model) of one of our judges' names; None for an imported judge."""
    match = _JUDGE.match(judge)
    return (int(match["version"]), match["model"]) if match else None


def fingerprint_parts(rubric: Rubric, model: str | None = None) -> dict[str, Any]:
    return {
        "model": model or rubric.model,
        "rubric_version": rubric.version,
        "rubric_hash": rubric.content_hash[:16],
        "template_hash": prompt.template_hash(),
        "granularity": rubric.granularity,
    }


def fingerprint(rubric: Rubric, model: str | None = None) -> str:
    text = json.dumps(fingerprint_parts(rubric, model), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def scored_units(store: Store, judge: str, sample: str, part: str) -> set[tuple[str, int]]:
    """The part's claims, without the rubric's few-shot examples (never scored)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}")
    units = {u for u, p in ensure_split(store, sample).items() if p == part}
    found = rubric_judge(judge)
    if found is not None:
        units -= few_shot_units(get_rubric(store, found[0]))
    return units


def judge_calibration(
    store: Store,
    judge: str,
    sample: str | None,
    part: str | None = HELD_OUT,
    by: Sequence[str] = (),
    seed: int = 0,
    repetitions: int = REPETITIONS,
    thresholds: Mapping[str, float | None] | None = None,
    epsilon: float = EPSILON,
) -> dict[str, Any]:
    """The calibration document on one part of the split (None or no sample: every claim).

    The Calibration page and the card both call this: one function, the same numbers."""
    units = scored_units(store, judge, sample, part) if sample and part else None
    document = calibration(
        store, judge, sample, "claim", by, seed, repetitions, thresholds, epsilon, units=units
    )
    document["part"] = part if units is not None else "all"
    return document


def _summary(document: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "n": document["n"],
        **{name: document[name] for name in CARD_STATISTICS},
        "readiness": document["readiness"],
        "slices": [
            {
                "slice": entry["slice"],
                "n": entry["n"],
                "reason": entry.get("reason"),
                **{name: entry.get(name) for name in CARD_STATISTICS},
                "readiness": entry["readiness"],
            }
            for entry in document["slices"]
        ],
    }


def build_card(
    store: Store,
    judge: str,
    sample: str,
    by: Sequence[str] = ("feature",),
    seed: int = 0,
    repetitions: int = REPETITIONS,
) -> dict[str, Any]:
    """The card of one of our judges on one sample: held-out numbers, tuning beside them."""
    found = rubric_judge(judge)
    if found is None:
        raise ValueError(f"{judge!r} is not a rubric judge (rubric-vN:model)")
    rubric = get_rubric(store, found[0])
    thresholds = load_thresholds(store)
    parts = {
        part: judge_calibration(store, judge, sample, part, by, seed, repetitions, thresholds)
        for part in (HELD_OUT, TUNING)
    }
    reviewers = agreement(store, sample, "claim", "binary", seed, repetitions)
    split = ensure_split(store, sample)
    return {
        "judge": judge,
        "sample": sample,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "fingerprint": fingerprint(rubric, found[1]),
        "pinned_to": fingerprint_parts(rubric, found[1]),
        "labelled_claims": len(split),
        "held_out_claims": sum(p == HELD_OUT for p in split.values()),
        "few_shot_examples": len(rubric.few_shot),
        "reviewers": reviewers["reviewers"],
        "reviewer_agreement": {
            "statistic": "krippendorff_alpha",
            **reviewers["krippendorff_alpha"],
        },
        "thresholds": thresholds,
        "current_version": current_version(store),  # what card_status measures staleness from
        "slices_by": list(by),
        HELD_OUT: _summary(parts[HELD_OUT]),
        TUNING: _summary(parts[TUNING]),
    }


def card_status(store: Store, card: Mapping[str, Any]) -> dict[str, Any]:
    """Fresh, or stale (with what changed). Against the card's own version while the version
    current when it was made still is (a card made for a version that is not current is fresh);
    once another version is made current, against the same judge on that version."""
    pinned = card["pinned_to"]
    now_current = current_version(store)
    unchanged = card.get("current_version") == now_current
    current = get_rubric(store, int(pinned["rubric_version"]) if unchanged else now_current)
    now = fingerprint_parts(current, judged_model(store, pinned, current))
    changed = [k for k in now if pinned.get(k) != now[k]]
    if not changed:
        return {"stale": False, "status": "fresh", "changed": []}
    what = ", ".join(f"{k} {pinned.get(k)} -> {now[k]}" for k in changed)
    return {"stale": True, "status": f"{STALE} ({what})", "changed": changed}


def judged_model(store: Store, pinned: Mapping[str, Any], current: Rubric) -> str:
    """The model the card's judge uses now: the run's own (`--model`) when the card was made
    for a model other than its version's default, else the current version's model."""
    try:
        default = get_rubric(store, int(pinned["rubric_version"])).model
    except (KeyError, TypeError, ValueError, RubricError):
        return current.model
    chosen = pinned.get("model")
    return str(chosen) if chosen and chosen != default else current.model


def ready_slices(card: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Slices whose held-out readiness passes (overall as the slice {} when it passes)."""
    held = card[HELD_OUT]
    ready = [s["slice"] for s in held["slices"] if s["readiness"].get("ready")]
    if held["readiness"].get("ready"):
        ready.insert(0, {})
    return ready
