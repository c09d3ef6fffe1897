"""The tables the Sample page shows: a plan per stratum, the list of stored samples.

Data shaping only (pandas frames of what sampling/ returns); no store access, no streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from annotate.sampling.allocation import NO_VALUE
from annotate.sampling.drawn import Plan


def plan_frame(plan: Plan) -> pd.DataFrame:
    """One row per stratum: its label, N_h, n_h, inclusion probability and judge rate."""
    return pd.DataFrame(
        {
            "stratum": [
                " | ".join(NO_VALUE if v is None else v for v in s.values) for s in plan.strata
            ],
            "N_h": [s.population for s in plan.strata],
            "n_h": [s.sample for s in plan.strata],
            "inclusion_probability": [s.inclusion_probability for s in plan.strata],
            "judge_rate": [s.judge_rate for s in plan.strata],
        }
    )


def describe_filters(filters: Mapping[str, Any]) -> str:
    """A stored sample's filters as one readable line (plain text: escape before Markdown)."""
    parts = [
        f"{k}={','.join(v)}" for k, v in {**filters["columns"], **filters["attributes"]}.items()
    ]
    parts += [f"{k}={filters[k]}" for k in ("since", "until") if filters.get(k)]
    if filters.get("judge"):
        parts.append("judge=" + ",".join(filters["judge"]))
    return "; ".join(parts) or "(none)"


def samples_frame(samples: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The stored samples, one row each, as `list_samples` returns them."""
    return pd.DataFrame(
        [
            {
                "name": s["name"],
                "traces": s["drawn"],
                "draws": s["draws"],
                "seed": s["seed"],
                "strata": ", ".join(s["by_columns"]),
                "allocation": s["allocation"],
                "min": s["min_per_stratum"],
                "frame": s["frame_size"],
                "excluded": ", ".join(f"{k} {v}" for k, v in s["excluded"].items()),
                "filters": describe_filters(s["filters"]),
                "by": s["created_by"],
                "when": s["created_at"],
            }
            for s in samples
        ]
    )
