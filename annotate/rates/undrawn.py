"""The frame traces a source sample left in the files, as rows of the rates' frame.

A sample drawn in place (sample --source, --from-rows) imports only its drawn traces; the
rest of the frame is known by the judge's verdict signatures recorded per stratum
(store.frame_verdicts). Each signature becomes one frame row standing for `traces` traces,
with the judge outcomes the label mapping gives it, computed as store.rates.frame_table
computes one trace's; each stratum's traces with no verdict from the judge make one more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from annotate.stats.gold import judge_response_outcome
from annotate.store.frame_verdicts import Signature, key_values

JUDGED = ("supported", "unsupported")


def outcomes_of(
    response: str | None,
    labels: Sequence[str],
    claims: Sequence[int],
    outcomes: Mapping[str, str],
    traces: int,
) -> tuple[int, int, float, int]:
    """(jcu, jcn, jr, unmapped) of `traces` traces with this signature, summed; jr is each
    trace's `judge_response_outcome`. Each trace of a signature used every label in `labels`
    (and no other): its claims are all supported when each label maps to supported (claims
    the judge never saw are not in the files, so they cannot leave the response open)."""
    pairs = list(zip(labels, claims, strict=True))
    jcu = sum(n for label, n in pairs if outcomes.get(label) == "unsupported")
    jcn = sum(n for label, n in pairs if outcomes.get(label) in JUDGED)
    unmapped = sum(n for label, n in pairs if label not in outcomes)
    said = outcomes.get(response) if response is not None else None
    unmapped += traces * int(response is not None and response not in outcomes)
    mapped = [outcomes.get(label) for label in labels]
    outcome = judge_response_outcome(
        said, mapped.count("unsupported"), mapped.count("supported"), len(mapped)
    )
    jr = {"unsupported": 1.0, "supported": 0.0}.get(outcome or "", math.nan)
    return jcu, jcn, jr, unmapped


def undrawn_rows(
    signatures: Sequence[Signature],
    judge: str | None,
    outcomes: Mapping[str, str],
    left: Mapping[str, int],
    strata_columns: Sequence[str],
    columns: Sequence[str],
) -> pd.DataFrame:
    """One frame row per signature of `judge` (and per stratum, its undrawn traces with no
    verdict); `left`: stratum key -> frame traces not drawn; `columns`: the frame's."""
    rows: list[dict[str, Any]] = []
    judged: dict[str, int] = {}
    for key, name, response, labels, claims, traces in signatures:
        if name != judge:
            continue
        jcu, jcn, jr, unmapped = outcomes_of(response, labels, claims, outcomes, traces)
        rows.append(_row(key, strata_columns, traces, jcu, jcn, jr, unmapped))
        judged[key] = judged.get(key, 0) + traces
    for key, count in left.items():
        if count - judged.get(key, 0) > 0:
            rows.append(_row(key, strata_columns, count - judged.get(key, 0), 0, 0, math.nan, 0))
    return pd.DataFrame(rows, columns=list(columns))


def _row(
    key: str,
    strata_columns: Sequence[str],
    traces: int,
    jcu: int,
    jcn: int,
    jr: float,
    unmapped: int,
) -> dict[str, Any]:
    values = key_values(key)
    row: dict[str, Any] = {"trace_id": None, "stratum": key, "traces": traces}
    row.update({f"s{i}": v for i, v in enumerate(values)})
    row.update(dict(zip(strata_columns, values, strict=True)))
    row.update({"jcu": jcu, "jcn": jcn, "jr": jr, "unmapped": unmapped})
    return row
