"""Version against version on the same claims: each judge's card statistics, the paired
difference (B - A) of sensitivity, specificity, accuracy and kappa with a paired bootstrap
interval, the exact McNemar test on the claims one got right and the other wrong, the flips.

Two versions scored on the same claims are paired: the bootstrap resamples traces within
strata and scores both judges on the same resamples, so what the claims share cancels out of
the difference. The Rubric page and `annotate rubric compare` both call `compare_versions`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np

from annotate.agreement.calibration import MIN_GOLD, calibration
from annotate.errors import UsageError
from annotate.judge.labels import ABSTAINED
from annotate.judge.rubrics.card import CARD_STATISTICS, REPETITIONS, rubric_judge, scored_units
from annotate.judge.rubrics.split import HELD_OUT, PARTS
from annotate.judge.rubrics.versions import get_rubric
from annotate.labelling.evidence import judge_labels, load_evidence
from annotate.stats import coefficients as stats
from annotate.stats.gold import UNSUPPORTED, claim_gold
from annotate.stats.judge import (
    JUDGE_STATISTICS,
    RATES,
    Pair,
    _rate_measure,
    accuracy_measure,
    confusion,
    kappa_measure,
    too_few_to_say,
)
from annotate.store import Store
from annotate.store import assignments as settings_sql
from annotate.store import evidence as evidence_sql

PAIRED_STATISTICS = ("sensitivity", "specificity", "accuracy", "cohen_kappa")
VERSION_STATISTICS = (*CARD_STATISTICS, "accuracy")
COMPARE_PARTS = (*PARTS, "all")
DEFAULT_MARGIN = 0.05
MCNEMAR = "exact McNemar: two-sided binomial test of the discordant claims at p = 1/2"
# the least each difference can be: a share's difference -1, kappa's (each >= -1, <= 1) -2
FLOORS = {"cohen_kappa": -2.0}


def judge_of(store: Store, version: str) -> str:
    """A judge's name from a rubric version number (its default model) or a judge's name."""
    text = str(version).strip()
    if text.isdigit():
        return get_rubric(store, int(text)).judge_name()
    if rubric_judge(text) is None and text not in settings_sql.judge_names(store):
        raise UsageError(
            f"{text!r} is neither a rubric version number nor a judge with verdicts; "
            "give a version (2) or a judge name (rubric-v2:claude-haiku-4-5)"
        )
    return text


def measure_of(name: str, pairs: Sequence[Pair]) -> stats.Measure:
    """The one definition of each statistic as per-unit sums (annotate.stats.judge)."""
    if name in RATES:
        return _rate_measure(pairs, *RATES[name])
    return accuracy_measure(pairs) if name == "accuracy" else kappa_measure(pairs)


def paired_measure(name: str, first: Sequence[Pair], second: Sequence[Pair]) -> stats.Measure:
    """B's statistic minus A's, from both judges' cells side by side on the same units."""
    a, b = measure_of(name, first), measure_of(name, second)
    width = a.features.shape[1]

    def value(sums: np.ndarray) -> np.ndarray:
        return b.value(sums[..., width:]) - a.value(sums[..., :width])

    features = np.hstack([a.features, b.features])
    reason = a.reason or b.reason
    return stats.Measure(features, value, len(first), reason, floor=FLOORS.get(name, -1.0))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p: twice the smaller binomial tail at 1/2, at most 1 (what
    scipy.stats.binomtest gives for p = 1/2, which is symmetric). Exact integer arithmetic."""
    n, low = a_only + b_only, min(a_only, b_only)
    if n == 0:
        return 1.0
    tail = Fraction(sum(comb(n, k) for k in range(low + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def paired_statistics(
    first: Sequence[Pair],
    second: Sequence[Pair],
    seed: int = 0,
    repetitions: int = REPETITIONS,
    strata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The paired differences B - A on the same units (first[i] and second[i] are one claim),
    each with a BCa bootstrap interval over traces within strata, the same resamples for every
    statistic and both judges; the exact McNemar test on the discordant claims."""
    traces = [p.trace_id for p in first]
    weights = stats.resample_weights(
        traces, repetitions, seed, [(strata or {}).get(t) for t in traces]
    )
    found: dict[str, Any] = {name: {"value": None} for name in JUDGE_STATISTICS}
    for name in PAIRED_STATISTICS:
        measure = paired_measure(name, first, second)
        stat = stats.interval(measure, [], 0, seed, weights=weights).as_json()
        found[name] = {**stat, "method": f"paired: {stat.get('method') or 'no interval'}"}
    found = too_few_to_say(found, confusion(first))  # the denominators are gold's: shared
    return {
        "n": len(first),
        **{name: found[name] for name in PAIRED_STATISTICS},
        "mcnemar": mcnemar(first, second),
    }


def mcnemar(first: Sequence[Pair], second: Sequence[Pair]) -> dict[str, Any]:
    a_right = [p.judge_unsupported == p.gold_unsupported for p in first]
    b_right = [p.judge_unsupported == p.gold_unsupported for p in second]
    right_to_wrong = sum(a and not b for a, b in zip(a_right, b_right, strict=True))
    wrong_to_right = sum(b and not a for a, b in zip(a_right, b_right, strict=True))
    return {
        "right_to_wrong": right_to_wrong,
        "wrong_to_right": wrong_to_right,
        "discordant": right_to_wrong + wrong_to_right,
        "p": mcnemar_exact(right_to_wrong, wrong_to_right),
        "method": MCNEMAR,
    }


def _outcomes(store: Store, judge: str, evidence: Any) -> dict[tuple[str, int], str]:
    judged = judge_labels(store, evidence, judge, "claim")
    return {unit: verdict["outcome"] for unit, verdict in judged.items()}


def _units(store: Store, judge: str, sample: str, part: str) -> set[tuple[str, int]]:
    if part == "all":
        return scored_units(store, judge, sample, HELD_OUT) | scored_units(
            store, judge, sample, "tuning"
        )
    return scored_units(store, judge, sample, part)


def common_units(
    store: Store, judges: Sequence[str], sample: str, part: str, evidence: Any, gold: Mapping
) -> tuple[list[tuple[str, int]], dict[str, dict]]:
    """The claims of the part that every judge answered (no abstention) and that have gold."""
    if part not in COMPARE_PARTS:
        raise UsageError(f"--part must be one of {', '.join(COMPARE_PARTS)}, got {part!r}")
    outcomes = {j: _outcomes(store, j, evidence) for j in judges}
    common = set.intersection(*(_units(store, j, sample, part) for j in judges))
    for found in outcomes.values():
        common &= {u for u, o in found.items() if o != ABSTAINED}
    return sorted(u for u in common if gold.get(u) in ("supported", UNSUPPORTED)), outcomes


def _pairs(units: Sequence, outcomes: Mapping, gold: Mapping, values: Mapping) -> list[Pair]:
    return [
        Pair(u[0], outcomes[u] == UNSUPPORTED, gold[u] == UNSUPPORTED, dict(values.get(u[0], {})))
        for u in units
    ]


def compare_versions(
    store: Store,
    first: str,
    second: str,
    sample: str,
    part: str = HELD_OUT,
    by: Sequence[str] = (),
    margin: float = DEFAULT_MARGIN,
    seed: int = 0,
    repetitions: int = REPETITIONS,
) -> dict[str, Any]:
    """The comparison document of judge A (`first`) and judge B (`second`) on one sample."""
    if first == second:
        raise UsageError(f"compare two different judges; both are {first}")
    evidence = load_evidence(store, sample)
    gold = {u: g.binary for u, g in claim_gold(evidence).items()}
    units, outcomes = common_units(store, (first, second), sample, part, evidence, gold)
    values = settings_sql.slice_values(store, sorted({t for t, _ in units}), by)
    strata = evidence_sql.strata(store, sample)
    pairs = [_pairs(units, outcomes[j], gold, values) for j in (first, second)]
    paired = paired_statistics(pairs[0], pairs[1], seed, repetitions, strata)
    return {
        "sample": sample, "part": part, "a": first, "b": second, "claims": len(units),
        "versions": [version_statistics(store, j, sample, set(units), seed, repetitions) for j in (first, second)],
        "difference": paired, "slices": _slices(pairs, by, seed, repetitions, strata),
        "flips": flips_of(units, outcomes, first, second, gold, evidence.texts),
        "gate": gate(paired, margin),
    }  # fmt: skip


def version_statistics(
    store: Store, judge: str, sample: str, units: set, seed: int, repetitions: int
) -> dict[str, Any]:
    """One judge's statistics on the compared claims, as its card computes them."""
    document = calibration(store, judge, sample, "claim", (), seed, repetitions, units=units)
    return {
        "judge": judge,
        "n": document["n"],
        **{name: document[name] for name in VERSION_STATISTICS},
        "readiness": document["readiness"],
    }


def _slices(
    pairs: Sequence[Sequence[Pair]], by: Sequence[str], seed: int, repetitions: int,
    strata: Mapping[str, Any],
) -> list[dict[str, Any]]:  # fmt: skip
    """The paired differences per slice; a slice with fewer than MIN_GOLD claims says so."""
    if not by:
        return []
    groups: dict[tuple, list[int]] = defaultdict(list)
    for index, pair in enumerate(pairs[0]):
        groups[tuple(pair.slice_values.get(c) for c in by)].append(index)
    rows = []
    for key, members in sorted(groups.items(), key=lambda item: repr(item[0])):
        row: dict[str, Any] = {"slice": dict(zip(by, key, strict=True)), "n": len(members)}
        if len(members) < MIN_GOLD:
            row["reason"] = f"too few to say: {len(members)} claims (< {MIN_GOLD})"
        else:
            a, b = ([side[i] for i in members] for side in pairs)
            row.update(paired_statistics(a, b, seed, repetitions, strata))
        rows.append(row)
    return rows


def flips_of(
    units: Sequence, outcomes: Mapping, first: str, second: str, gold: Mapping, texts: Mapping
) -> list[dict[str, Any]]:
    found = []
    for unit in units:
        was, now = (outcomes[j][unit] == gold[unit] for j in (first, second))
        if was != now:
            found.append({
                "trace_id": unit[0], "claim_index": unit[1], "claim": texts.get(unit, ""),
                "gold": gold[unit], "a": outcomes[first][unit], "b": outcomes[second][unit],
                "flip": "right to wrong" if was else "wrong to right",
            })  # fmt: skip
    return found


def gate(paired: Mapping[str, Any], margin: float) -> dict[str, Any]:
    """B passes when no difference's lower bound is below -margin (B not worse than A by more
    than the margin). A statistic without an interval cannot fail it; it is named unchecked."""
    if not 0 <= margin <= 1:
        raise UsageError(f"--margin must be between 0 and 1, got {margin}")
    worse, unchecked = [], []
    for name in PAIRED_STATISTICS:
        low = paired[name].get("low")
        if low is None:
            unchecked.append(name)
        elif low < -margin:
            worse.append(name)
    return {"margin": margin, "passed": not worse, "worse": worse, "unchecked": unchecked}


def comparison_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row a statistic: A and B with their own intervals, then the paired difference B - A
    with its interval (or why there is none). The page's table and the CLI's text."""
    a, b = document["versions"]
    rows = []
    for name in PAIRED_STATISTICS:
        row: dict[str, Any] = {"statistic": name}
        for side, version in (("a", a), ("b", b)):
            stat = version[name]
            row |= {side: stat.get("value"), f"{side}_low": stat.get("low"),
                    f"{side}_high": stat.get("high")}  # fmt: skip
        diff = document["difference"][name]
        row |= {"difference": diff.get("value"), "low": diff.get("low"), "high": diff.get("high"),
                "note": diff.get("reason") or ""}  # fmt: skip
        rows.append(row)
    return rows
