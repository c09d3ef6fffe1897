"""Why a slice's rate has no number where a number would mislead: strata with no gold yet
(the weighted human rate), and a Rogan-Gladen correction that cannot hold."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annotate.errors import counted, stratum_label
from annotate.stats import rates as est


def strata_without_gold(covered: set[Any], part: pd.DataFrame, level: str) -> str | None:
    """Why the slice has no rate while some of its strata have no gold at `level`, if they do:
    the ratio estimator would then speak for the labelled strata alone, silently. `covered`:
    the strata with gold at `level`; `part`: the slice's frame rows (stratum, traces)."""
    if not len(part):
        return None
    missing = part[~part["stratum"].isin(covered)]
    if not len(missing):
        return None
    sizes = missing.groupby("stratum", sort=True)["traces"].sum()
    sizes = sizes[sizes > 0].sort_values(ascending=False, kind="stable")
    if not len(sizes):
        return None
    total = int(part["traces"].sum())
    named = ", ".join(
        f"{stratum_label(str(key))} ({counted(int(size), 'trace')})"
        for key, size in sizes.head(3).items()
    )
    more = f" and {len(sizes) - 3} more" if len(sizes) > 3 else ""
    return (
        f"no {level} gold yet in {counted(len(sizes), 'stratum')} of this slice: "
        f"{named}{more}, {int(sizes.sum()):,} of its {total:,} traces; the labelled strata "
        "cannot stand for them: label them, or narrow the slice"
    )


def rogan_gladen_unfit(raw: float, cells: np.ndarray) -> str | None:
    """Why Rogan-Gladen gives no number on these pooled [tp, fn, tn, fp], if it does not: a
    gold class missing (sensitivity or specificity undefined), no skill, or a raw rate its
    sensitivity and specificity cannot explain (the correction leaves [0, 1], and a clipped
    0 or 1 would come with an interval collapsed on the clip)."""
    tp, fn, tn, fp = (float(c) for c in cells)
    if not tp + fn:
        return "no unsupported gold in this slice: the judge's sensitivity is undefined"
    if not tn + fp:
        return "no supported gold in this slice: the judge's specificity is undefined"
    sensitivity, specificity = tp / (tp + fn), tn / (tn + fp)
    corrected = est.rogan_gladen(raw, sensitivity, specificity, clip=False)
    if corrected is None:
        return "sensitivity + specificity <= 1: the judge is no better than chance here"
    if corrected < 0:
        return (
            f"the judge's raw rate ({raw:.1%}) is below its false-alarm rate on this slice's gold "
            f"({1 - specificity:.1%}): the correction is negative ({corrected:.2f}), no rate"
        )
    if corrected > 1:
        return (
            f"the judge's raw rate ({raw:.1%}) is above its sensitivity on this slice's gold "
            f"({sensitivity:.1%}): the correction is above 1 ({corrected:.2f}), no rate"
        )
    return None
