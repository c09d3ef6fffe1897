"""Judge against human gold at claim level: confusion, sensitivity, specificity, kappa, per slice.

Positive means unsupported. Proportions carry Wilson intervals; balanced accuracy and
kappa a seeded bootstrap over traces. A slice with too few gold claims says so
instead of showing a number. Also the reviewers' agreement tables built from the store.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotate.agreement import (
    Stat,
    bootstrap,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
    wilson_interval,
)
from annotate.sampling import JUDGE_OK_LABELS
from annotate.store import Store
from annotate.store import assignments as sql
from annotate.store.labels import active_rubric

MIN_GOLD = 20


@dataclass(frozen=True)
class Pair:
    trace_id: str
    judge_unsupported: bool
    gold_unsupported: bool
    slice_values: dict[str, Any]


def binary_map(store: Store) -> dict[str, str]:
    _, labels = active_rubric(store)
    return {item["label"]: item["binary"] for item in labels}


def binary_gold(store: Store, sample: str) -> dict[tuple[str, int], str]:
    """Adjudicated label's outcome if any; else the outcome all reviewers' labels map to."""
    binary = binary_map(store)
    outcomes: dict[tuple[str, int], set[str]] = defaultdict(set)
    for vote in sql.latest_votes(store, sample):
        outcomes[(vote["trace_id"], vote["claim_index"])].add(binary.get(vote["label"], "excluded"))
    gold = {key: next(iter(found)) for key, found in outcomes.items() if len(found) == 1}
    for item in sql.latest_adjudications(store, sample):
        gold[(item["trace_id"], item["claim_index"])] = binary.get(item["label"], "excluded")
    return {key: value for key, value in gold.items() if value != "excluded"}


def judge_pairs(store: Store, sample: str, judge: str, by: Sequence[str] = ()) -> list[Pair]:
    binary = binary_map(store)
    gold = binary_gold(store, sample)
    verdicts = [v for v in sql.sample_claim_verdicts(store, sample) if v["judge"] == judge]
    values = sql.slice_values(store, [v["trace_id"] for v in verdicts], by)
    pairs = []
    for verdict in verdicts:
        key = (verdict["trace_id"], verdict["claim_index"])
        if key not in gold:
            continue
        judged = binary.get(verdict["label"]) or (
            "supported" if verdict["label"] in JUDGE_OK_LABELS else "unsupported"
        )
        if judged == "excluded":
            continue
        slice_values = values.get(verdict["trace_id"], {})
        pairs.append(
            Pair(
                verdict["trace_id"],
                judged == "unsupported",
                gold[key] == "unsupported",
                slice_values,
            )
        )
    return pairs


def _proportion(hits: int, n: int) -> dict[str, Any]:
    if n == 0:
        return Stat(None, 0, reason="no claims in the denominator").as_json()
    low, high = wilson_interval(hits, n)
    return Stat(hits / n, n, low, high, method="Wilson").as_json()


def _confusion(pairs: Sequence[Pair]) -> dict[str, int]:
    return {
        "tp": sum(p.judge_unsupported and p.gold_unsupported for p in pairs),
        "fp": sum(p.judge_unsupported and not p.gold_unsupported for p in pairs),
        "tn": sum(not p.judge_unsupported and not p.gold_unsupported for p in pairs),
        "fn": sum(not p.judge_unsupported and p.gold_unsupported for p in pairs),
    }


def _balanced(table: Sequence[Sequence[Any]]) -> Stat:
    positives = [row for row in table if row[1]]
    negatives = [row for row in table if not row[1]]
    if not positives or not negatives:
        return Stat(None, len(table), reason="needs both supported and unsupported gold claims")
    sensitivity = sum(row[0] for row in positives) / len(positives)
    specificity = sum(not row[0] for row in negatives) / len(negatives)
    return Stat((sensitivity + specificity) / 2, len(table))


def _kappa(table: Sequence[Sequence[Any]]) -> Stat:
    return cohen_kappa([row[0] for row in table], [row[1] for row in table])


def calibration_stats(
    pairs: Sequence[Pair], seed: int = 0, repetitions: int = 1000
) -> dict[str, Any]:
    confusion = _confusion(pairs)
    tp, fp, tn, fn = confusion["tp"], confusion["fp"], confusion["tn"], confusion["fn"]
    table = [[p.judge_unsupported, p.gold_unsupported] for p in pairs]
    groups = [p.trace_id for p in pairs]
    return {
        "n": len(pairs),
        "confusion": confusion,
        "sensitivity": _proportion(tp, tp + fn),
        "specificity": _proportion(tn, tn + fp),
        "precision": _proportion(tp, tp + fp),
        "accuracy": _proportion(tp + tn, len(pairs)),
        "balanced_accuracy": bootstrap(_balanced, table, groups, repetitions, seed).as_json(),
        "cohen_kappa": bootstrap(_kappa, table, groups, repetitions, seed).as_json(),
    }


def calibration(
    store: Store, sample: str, judge: str, by: Sequence[str] = (), seed: int = 0
) -> dict[str, Any]:
    """The `annotate calibration --json` document (claim level); positive means unsupported."""
    pairs = judge_pairs(store, sample, judge, by)
    result = {"judge": judge, "level": "claim", **calibration_stats(pairs, seed), "slices": []}
    groups: dict[tuple[Any, ...], list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[tuple(pair.slice_values.get(c) for c in by)].append(pair)
    for key, members in sorted(groups.items(), key=lambda item: repr(item[0])):
        entry: dict[str, Any] = {"slice": dict(zip(by, key, strict=True))}
        if len(members) < MIN_GOLD:
            entry.update(
                n=len(members),
                reason=f"too few gold claims ({len(members)} < {MIN_GOLD}) for a number",
            )
        else:
            entry.update(calibration_stats(members, seed))
        result["slices"].append(entry)
    return result


def agreement_table(
    store: Store, sample: str, scale: str = "binary"
) -> tuple[list[list[Any]], list[str], list[str]]:
    """Units (claims) x reviewers with each reviewer's latest label; also each unit's trace."""
    binary = binary_map(store)
    votes = sql.latest_votes(store, sample)
    reviewers = sorted({v["reviewer"] for v in votes})
    units: dict[tuple[str, int], dict[str, Any]] = defaultdict(dict)
    for vote in votes:
        label = vote["label"] if scale == "full" else binary.get(vote["label"])
        if scale != "full" and label == "excluded":
            label = None
        units[(vote["trace_id"], vote["claim_index"])][vote["reviewer"]] = label
    keys = sorted(units)
    table = [[units[key].get(r) for r in reviewers] for key in keys]
    return table, reviewers, [key[0] for key in keys]


def agreement(store: Store, sample: str, scale: str = "binary", seed: int = 0) -> dict[str, Any]:
    """The `annotate agreement --json` document (claim level)."""
    table, reviewers, traces = agreement_table(store, sample, scale)
    rated = [i for i, row in enumerate(table) if sum(v is not None for v in row) >= 2]
    table, traces = [table[i] for i in rated], [traces[i] for i in rated]

    def interval(statistic: Any) -> dict[str, Any]:
        return bootstrap(statistic, table, traces, 500, seed).as_json()

    pairs = []
    for i, a in enumerate(reviewers):
        for j in range(i + 1, len(reviewers)):
            column = [row[i] for row in table], [row[j] for row in table]
            if cohen_kappa(*column).units:
                shared = [
                    k for k, row in enumerate(table) if row[i] is not None and row[j] is not None
                ]
                sub = [[table[k][i], table[k][j]] for k in shared]
                stat = bootstrap(
                    lambda t: cohen_kappa([r[0] for r in t], [r[1] for r in t]),
                    sub,
                    [traces[k] for k in shared],
                    500,
                    seed,
                )
                pairs.append({"a": a, "b": reviewers[j], **stat.as_json()})
    return {
        "level": "claim",
        "scale": scale,
        "units": len(table),
        "percent_agreement": interval(percent_agreement),
        "krippendorff_alpha": interval(krippendorff_alpha),
        "fleiss_kappa": interval(fleiss_kappa),
        "gwet_ac1": interval(gwet_ac1),
        "cohen_kappa": pairs,
    }
