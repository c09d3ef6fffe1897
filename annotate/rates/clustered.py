"""The judge's raw rate of a slice with a trace-clustered interval: a seeded BCa bootstrap of
the slice's frame traces within strata (claims of one trace move together), never narrower
than Wilson's at the same share and n. Reads the frame only; no store.

A frame row stands for `traces` traces with the same judge claim counts (store.rates.
frame_table; the undrawn rows of a sample drawn in place are verdict signatures, which keep one
trace's claim verdicts per label: store.frame_verdicts). The bootstrap's units are the slice's
traces grouped by stratum and one trace's numerator and denominator, in that order, whatever
rows carried them: a sample drawn in place and the same sample over the imported population
draw the same resamples. (Signatures recorded before they kept per-trace counts give each
trace its row's mean.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotate.stats import rates as est


def clustered(
    rate: est.Rate, part: pd.DataFrame, level: str, resamples: int, seed: int
) -> est.Rate:
    """`rate` (the judge's raw share of `part`, the slice's frame rows) with the trace
    bootstrap's interval in place of Wilson's over units, at least as wide as Wilson's."""
    if rate.rate is None:
        return rate
    units = trace_units(part, level)
    counts, per_trace = units["traces"].to_numpy(np.int64), units[["num", "den"]].to_numpy()
    found = est.clustered_ratio(counts, per_trace, list(units["stratum"]), resamples, seed)
    method = (
        f"{rate.method.split('; Wilson')[0]}; BCa bootstrap over {int(counts.sum())} traces "
        f"within {units['stratum'].nunique()} strata, {resamples} resamples, "
        f"seed {seed} (claims of one trace move together); at least Wilson's"
    )
    if found is None or np.isnan(found[1]):
        return est.Rate(rate.rate, None, None, rate.n, method, "too few traces for an interval")
    wide_low, wide_high = est.wilson_at(found[0], rate.n)
    return est.Rate(found[0], min(found[1], wide_low), max(found[2], wide_high), rate.n, method)


def trace_units(part: pd.DataFrame, level: str) -> pd.DataFrame:
    """stratum, num, den, traces: the traces the judge rated at this level, one row per
    stratum and per-trace numerator and denominator, sorted by these (the resampling units)."""
    counts, per_trace = per_trace_counts(part, level)
    rows = pd.DataFrame(
        {"stratum": part["stratum"].to_numpy(), "num": per_trace[:, 0], "den": per_trace[:, 1]}
    ).assign(traces=counts)
    rows = rows[rows["traces"] > 0]
    return rows.groupby(["stratum", "num", "den"], sort=True)["traces"].sum().reset_index()


def per_trace_counts(part: pd.DataFrame, level: str) -> tuple[np.ndarray, np.ndarray]:
    """(traces per row, one trace's numerator and denominator): at claim level its claims
    judged unsupported and judged; at response level its outcome and 1. Traces the judge did
    not rate at this level count 0."""
    traces = part["traces"].to_numpy(np.int64)
    if level == "claim":
        counts = np.where(part["jcn"].to_numpy() > 0, traces, 0)
        return counts, part[["jcu", "jcn"]].to_numpy(float) / np.maximum(traces, 1)[:, None]
    outcome = part["jr"].to_numpy(float)
    judged = ~np.isnan(outcome)
    counts = np.where(judged, traces, 0)
    return counts, np.column_stack([np.nan_to_num(outcome), judged.astype(float)])
