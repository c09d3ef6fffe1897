"""judge_raw's method says how many of the slice's frame traces the judge read: a judge
that read 600 of 1,663 (or only the sample) is not a rate 'over all 1,663 frame traces'."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import RatesInput


def partly_judged(read: int, frame: int, labelled: int = 40) -> RatesInput:
    ids = [f"t{i:05d}" for i in range(frame)]
    judged = np.arange(frame) < read
    flagged = judged & (np.arange(frame) % 5 == 0)
    table = pd.DataFrame({"trace_id": ids, "stratum": '["all"]', "unmapped": 0,
                          "jcu": flagged.astype(int), "jcn": judged.astype(int),
                          "jr": np.where(judged, flagged.astype(float), np.nan)})  # fmt: skip
    sample = ids[:labelled]
    return RatesInput(
        sample="s", strata_columns=["stratum"], populations={'["all"]': frame}, frame=table,
        units=pd.DataFrame({"trace_id": sample, "stratum": '["all"]', "pi": labelled / frame,
                            "weight": frame / labelled}),
        claims=pd.DataFrame({"trace_id": sample, "claim_index": 0, "gold": 0, "error_type": None}),
        responses=pd.DataFrame({"trace_id": sample, "gold": 0}),
        judge_claims=pd.DataFrame(columns=["trace_id", "claim_index", "outcome"]), judge="j",
    )  # fmt: skip


def test_judge_raw_says_how_many_traces_the_judge_read_of_the_frame():
    """Catches 'over all 1663 frame traces' when the judge read 600 of them."""
    rows = rate_rows(partly_judged(600, 1663), (), ["claim", "response"], ["judge_raw"],
                     resamples=100)  # fmt: skip
    for row in rows:
        assert "on the 600 of the slice's 1,663 frame traces it read" in row["method"], row
        assert "over all" not in row["method"]
        assert row["n"] == 600 and row["rate"] == 120 / 600


def test_a_judge_that_read_only_the_sample_says_so():
    rows = rate_rows(partly_judged(40, 900), (), ["response"], ["judge_raw"], resamples=100)
    assert "on the 40 of the slice's 900 frame traces it read" in rows[0]["method"]
