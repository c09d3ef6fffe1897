"""What the Rogan-Gladen cross-check of a slice resamples: the judge's sensitivity and
specificity cells on gold, each trace weighted 1/pi (N_h / labelled n_h) so an oversampled
stratum counts for its share of the population only, and the judge's raw rate in each
resample, its labelled traces drawn as the design draws them and the slice's other frame
traces drawn within strata beside them (so the interval carries the raw rate's sampling
error as well as the calibration's). Reads a rate's tables; the arithmetic is stats.rates'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotate.stats.intervals import ratio

KINDS = ("tp", "fn", "tn", "fp")


def weighted_cells(units: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    """units x [tp, fn, tn, fp], each unit's (gold, judge) pairs counted and times its weight
    `w`, aligned with `units` (a design's labelled traces; none where it has no pair)."""
    gold, judge = pairs["gold"] == 1, pairs["judge"] == 1
    kinds = pd.DataFrame(
        {"trace_id": pairs["trace_id"], "tp": gold & judge, "fn": gold & ~judge,
         "tn": ~gold & ~judge, "fp": ~gold & judge},
    ).groupby("trace_id")[list(KINDS)].sum()  # fmt: skip
    aligned = kinds.reindex(units["trace_id"]).fillna(0).to_numpy(float)
    return aligned * units[["w"]].to_numpy(float)


def raw_draws(
    units: pd.DataFrame,
    members: np.ndarray,
    draws: np.ndarray,
    part: pd.DataFrame,
    level: str,
    seed: int,
) -> np.ndarray:
    """The slice's raw judge rate in each resample (NaN where nothing judged was drawn).

    units, members, draws: the design's labelled traces, the slice's among them, and their
    resampled counts; part: the slice's frame rows, of which the others (traces not among
    members) are drawn within strata with a generator seeded from `seed`."""
    labelled = _per_trace(units.iloc[members], level, np.ones(len(members)))
    sums = draws[:, members] @ labelled
    taken = set(units["trace_id"].iloc[members])
    rest = part[~part["trace_id"].isin(taken)]
    if len(rest):
        sums = sums + _rest_sums(rest, level, draws.shape[0], seed)
    return ratio(sums[:, 0], sums[:, 1])


def _per_trace(rows: pd.DataFrame, level: str, traces: np.ndarray) -> np.ndarray:
    """rows x [numerator, denominator] of one trace of each row: at claim level its claims
    judged unsupported and judged, at response level its outcome and whether it has one."""
    if level == "claim":
        counts = rows[["jcu", "jcn"]].fillna(0).to_numpy(float)
        return counts / np.maximum(traces, 1)[:, None]
    outcome = rows["jr"].to_numpy(float)
    judged = ~np.isnan(outcome)
    return np.column_stack([np.where(judged, outcome, 0.0), judged.astype(float)])


def _rest_sums(rest: pd.DataFrame, level: str, resamples: int, seed: int) -> np.ndarray:
    """resamples x [numerator, denominator] summed over the traces drawn, T_h per stratum of
    T_h traces; a row stands for `traces` traces alike (a verdict signature's)."""
    traces = rest["traces"].to_numpy(float)
    per = _per_trace(rest, level, traces)
    strata = pd.factorize(rest["stratum"], sort=True)[0]
    kinds, kind = np.unique(np.column_stack([strata, per]), axis=0, return_inverse=True)
    counts = np.bincount(kind.ravel(), traces, len(kinds))
    rng = np.random.default_rng((seed, 1))  # not the design's stream: these draws are others
    sums = np.zeros((resamples, 2))
    for stratum in np.unique(kinds[:, 0]):
        rows = np.flatnonzero(kinds[:, 0] == stratum)
        total = int(round(counts[rows].sum()))
        if total:
            drawn = rng.multinomial(total, counts[rows] / counts[rows].sum(), size=resamples)
            sums += drawn @ kinds[rows, 1:]
    return sums
