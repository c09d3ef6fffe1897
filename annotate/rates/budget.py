"""The label budget: how many more human-labelled traces each stratum needs for a target
interval width, without the judge (classical) and with it (PPI), from the current estimates.

Response level (a trace is the unit of labelling). The rate a plan assumes is the value in the
current Wilson interval nearest 1/2, and sensitivity and specificity are Agresti-Coull centres,
so a plan errs on the side of more labels. The width is the 95% normal interval's total width.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from annotate.accounts.activity import Actor
from annotate.rates.active import is_active, label_savings, top_up_active
from annotate.rates.estimate import _pairs
from annotate.rates.inputs import RatesInput
from annotate.sampling.samples import top_up
from annotate.stats import rates as est
from annotate.store import Store
from annotate.store.samples import stored_strata, stratum_key_text


def plan_labels(inputs: RatesInput, width: float) -> dict[str, Any]:
    if not 0 < width < 1:
        from annotate.errors import UsageError

        raise UsageError(f"--width is a share between 0 and 1 (0.04 = four points), got {width}")
    gold = inputs.units.merge(inputs.responses, on="trace_id")
    pairs = _pairs(inputs, "response")
    strata = []
    for stratum, population in sorted(inputs.populations.items()):
        strata.append(_stratum_plan(stratum, population, gold[gold["stratum"] == stratum],
                                    pairs[pairs["stratum"] == stratum], width))  # fmt: skip
    totals = {
        kind: sum(s[kind]["more"] for s in strata) for kind in ("without_judge", "with_judge")
    }
    return {
        "width": width,
        "level": "response",
        "judge": inputs.judge,
        "strata": strata,
        "more_without_judge": totals["without_judge"],
        "more_with_judge": totals["with_judge"],
        # labels in all for the width: uniform human-only, uniform PPI, active (rates.active)
        "labels_needed": label_savings(inputs, width),
        "method": (
            "n = (1.96 / (width / 2))^2 * variance, finite-population corrected; variance "
            "p(1 - p) without the judge, Var(gold - judge) from p, sensitivity and specificity "
            "with it (PPI, never above p(1 - p)); p is the value in the current Wilson interval "
            "nearest 1/2"
        ),
    }


def _stratum_plan(
    stratum: str, population: int, gold: pd.DataFrame, pairs: pd.DataFrame, width: float
) -> dict[str, Any]:
    labelled, hits = len(gold), int(gold["gold"].sum())
    rate = est.planning_rate(hits, labelled)
    classical = est.labels_needed(rate * (1 - rate), width, population)
    tp = int(((pairs["gold"] == 1) & (pairs["judge"] == 1)).sum())
    positives, negatives = int((pairs["gold"] == 1).sum()), int((pairs["gold"] == 0).sum())
    tn = int(((pairs["gold"] == 0) & (pairs["judge"] == 0)).sum())
    sensitivity, specificity = est.smoothed(tp, positives), est.smoothed(tn, negatives)
    variance = est.ppi_unit_variance(rate, sensitivity, specificity)
    with_judge = est.labels_needed(variance, width, population)
    return {
        "stratum": stratum,
        "population": population,
        "labelled": labelled,
        "pairs": len(pairs),  # labelled responses with the judge's response verdict
        "rate": hits / labelled if labelled else None,
        "planning_rate": rate,
        "sensitivity": sensitivity,
        "specificity": specificity,
        "without_judge": {"needed": classical, "more": max(0, classical - labelled)},
        "with_judge": {"needed": with_judge, "more": max(0, with_judge - labelled)},
    }


def top_up_from_plan(
    store: Store,
    sample: str,
    plan: Mapping[str, Any],
    with_judge: bool = False,
    actor: Actor | str | None = None,
) -> dict[str, Any]:
    """Draw into the sample what each stratum still needs: the plan's `needed` less the traces
    already sampled (sampled but unlabelled traces count: they are waiting for reviewers)."""
    kind = "with_judge" if with_judge else "without_judge"
    sampled = {stratum_key_text(k): n for k, _, n, _ in stored_strata(store, sample)}
    extras = {
        tuple(json.loads(s["stratum"])): max(0, s[kind]["needed"] - sampled.get(s["stratum"], 0))
        for s in plan["strata"]
    }
    total = sum(extras.values())
    if total == 0:
        return {
            "added": 0,
            "per_stratum": {},
            "reason": "every stratum already has the planned traces",
        }
    if is_active(store, sample):  # per trace, from the gold so far: not per stratum
        drawn = top_up_active(store, sample, total, actor).plan
    else:
        drawn = top_up(store, sample, total, actor, per_stratum=extras)
    return {
        "added": len(drawn.trace_ids),
        "per_stratum": {stratum_key_text(k): v for k, v in extras.items() if v},
    }
