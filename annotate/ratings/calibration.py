"""A judge's ratings against the reviewers' mean on one criterion: quadratic-weighted kappa,
mean absolute difference, mean bias (judge minus human: a judge that rates 0.6 higher is not
calibrated however well it correlates) and Spearman's rho, each with a trace bootstrap within
strata and its units; and readiness per criterion."""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean
from typing import Any

from annotate.ratings.agreement import Scores, scores_by_reviewer
from annotate.ratings.record import criterion_scale
from annotate.stats import coefficients as stats
from annotate.stats.ordinal import difference_measure, on_scale, spearman_stat
from annotate.store import Store
from annotate.store import evidence as evidence_sql
from annotate.store import ratings as sql

# Ready: kappa's lower bound at least this, and the whole bias interval within +-this many points
READY_KAPPA, READY_BIAS = 0.6, 0.5


def human_means(scores: Scores) -> dict[str, float]:
    """trace -> the mean of its reviewers' scores."""
    by_trace: dict[str, list[float]] = {}
    for given in scores.values():
        for trace, score in given.items():
            by_trace.setdefault(trace, []).append(float(score))
    return {trace: fmean(values) for trace, values in sorted(by_trace.items())}


def scale_or_seen(scale: tuple[int, int] | None, seen: list[float]) -> tuple[float, float]:
    """The criterion's scale from the rubric, else the range of the scores seen (at least 1)."""
    if scale is not None:
        return float(scale[0]), float(scale[1])
    low = min(seen) if seen else 1.0
    return low, max(max(seen) if seen else low, low + 1.0)


def judge_against_humans(
    judge: Mapping[str, float],
    humans: Mapping[str, float],
    span: float,
    strata: Mapping[str, Any],
    seed: int = 0,
    repetitions: int = 1000,
) -> dict[str, Any]:
    """The statistics on the traces both the judge and a reviewer rated."""
    traces = sorted(set(judge) & set(humans))
    j = [float(judge[t]) for t in traces]
    h = [humans[t] for t in traces]
    weights = stats.resample_weights(traces, repetitions, seed, [strata.get(t) for t in traces])

    def boot(measure: stats.Measure) -> stats.Stat:
        return stats.interval(measure, [], 0, seed, weights=weights)

    bias = on_scale(boot(difference_measure(j, h, span, absolute=False)), span)
    mad = on_scale(boot(difference_measure(j, h, span, absolute=True)), span)
    found = {
        "units": len(traces),
        "judge_mean": fmean(j) if j else None,
        "human_mean": fmean(h) if h else None,
        "weighted_kappa_quadratic": boot(stats.cohen_measure(j, h, "quadratic")).as_json(),
        "mean_absolute_difference": mad.as_json(),
        "mean_bias": bias.as_json(),
        "spearman_rho": spearman_stat(j, h, weights, seed).as_json(),
    }
    found["readiness"] = rating_readiness(found)
    return found


def rating_readiness(document: Mapping[str, Any]) -> dict[str, Any]:
    """Ready when kappa's lower bound meets READY_KAPPA and the bias interval lies within
    +-READY_BIAS points: both bounds, never the point values."""
    kappa_low = document["weighted_kappa_quadratic"].get("low")
    bias = document["mean_bias"]
    kappa_ok = kappa_low is not None and kappa_low >= READY_KAPPA
    bias_ok = bias.get("low") is not None and max(abs(bias["low"]), abs(bias["high"])) <= READY_BIAS
    if kappa_ok and bias_ok:
        verdict = "ready: kappa's lower bound and the whole bias interval meet their thresholds"
    else:
        failed = [n for n, ok in (("weighted kappa", kappa_ok), ("mean bias", bias_ok)) if not ok]
        verdict = "not ready: " + ", ".join(failed) + " outside its threshold or undefined"
    return {
        "ready": kappa_ok and bias_ok,
        "checks": [
            {"statistic": "weighted_kappa_quadratic", "threshold": READY_KAPPA, "passed": kappa_ok},
            {"statistic": "mean_bias", "threshold": READY_BIAS, "passed": bias_ok},
        ],
        "verdict": verdict,
    }


def rating_calibration(
    store: Store,
    judge: str,
    criterion: str,
    sample: str | None = None,
    seed: int = 0,
    repetitions: int = 1000,
) -> dict[str, Any]:
    """`annotate calibration --criterion NAME`: the judge against the reviewers' mean."""
    humans = human_means(scores_by_reviewer(sql.reviewer_ratings(store, criterion, sample)))
    judged = dict(sql.judge_scores(store, judge, criterion, sample))
    seen = [*humans.values(), *judged.values()]
    low, high = scale_or_seen(criterion_scale(store, criterion), seen)
    span = high - low
    strata = evidence_sql.strata(store, sample)
    return {
        "judge": judge,
        "criterion": criterion,
        "sample": sample,
        "judged_units": len(judged),
        **judge_against_humans(judged, humans, span, strata, seed, repetitions),
    }
