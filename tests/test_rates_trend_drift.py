"""Trend and drift with trace-clustered intervals: the claims of one trace move together, so a
window's judge rate is resampled by trace within strata, and windows assigned at random raise
no drift alarm beyond the test's 5%.

The references are the design (months assigned at random: no drift by construction) and
counts the store gives directly, not numbers of the rates code.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from annotate.rates.estimate import _row, judge_raw, slice_keys
from annotate.rates.inputs import RatesInput, load_inputs
from annotate.rates.trend import drift, trend

STUDIES = 160


def _population(rng: np.random.Generator, traces: int = 300) -> pd.DataFrame:
    """A frame whose traces each hold 1 to 9 claims with a propensity of their own (mean 0.1,
    Beta(0.3, 2.7): claims of one trace move together), months and strata drawn at random."""
    claims = rng.integers(1, 10, traces)
    unsupported = rng.binomial(claims, rng.beta(0.3, 2.7, traces))
    return pd.DataFrame(
        {
            "trace_id": [f"t{i}" for i in range(traces)],
            "stratum": rng.choice(["a", "b"], traces),
            "month": rng.choice(["2026-01", "2026-02"], traces),
            "jcu": unsupported,
            "jcn": claims,
            "jr": (unsupported > 0).astype(float),
            "unmapped": 0,
            "traces": 1,
        }
    )


def _inputs(frame: pd.DataFrame) -> RatesInput:
    """The frame alone: no sample units, no gold (the judge's raw rate needs neither)."""
    units, claims, responses, judge_claims = (
        pd.DataFrame(columns=columns)
        for columns in (
            ["trace_id", "stratum", "pi", "weight"],
            ["trace_id", "claim_index", "gold", "error_type"],
            ["trace_id", "gold"],
            ["trace_id", "claim_index", "outcome"],
        )
    )
    return RatesInput(
        "s", ["stratum"], {}, frame, units, claims, responses, judge_claims, judge="judge"
    )


def _alarms_of_claim_wilson(inputs: RatesInput) -> bool:
    """The drift test as it stood: each window's judge rate with Wilson's over its claims."""
    rows = []
    for key in slice_keys(inputs.frame, ["month"])[1:]:
        part = inputs.frame[inputs.frame["month"] == key["month"]]
        rows.append(
            _row(key, "claim", "judge_raw", judge_raw(inputs, part, "claim", key), 0.1, inputs)
        )
    return any(d["alert"] for d in drift(rows, "month"))


def test_months_assigned_at_random_raise_no_drift_alarm_in_95_percent_of_studies():
    """1,000 such studies (resamples 1,000): 4.3% alarmed; Wilson over claims: 19.8%."""
    rng = np.random.default_rng(35)
    clustered = claim_wilson = 0
    for study in range(STUDIES):
        inputs = _inputs(_population(rng))
        found = trend(inputs, "month", "claim", ("judge_raw",), resamples=400, seed=study)
        assert len(found["drift"]) == 1 and found["drift"][0]["p"] is not None
        clustered += found["drift"][0]["alert"]
        claim_wilson += _alarms_of_claim_wilson(inputs)
    assert clustered / STUDIES <= 0.06
    assert claim_wilson / STUDIES >= 0.12  # what the trace bootstrap fixes


def test_the_judges_window_interval_names_its_trace_bootstrap_and_is_at_least_wilsons():
    inputs = _inputs(_population(np.random.default_rng(1)))
    found = trend(inputs, "month", "claim", ("judge_raw",), resamples=200, seed=4)
    for row in found["rows"]:
        part = inputs.frame[inputs.frame["month"] == row["slice"]["month"]]
        wilson = judge_raw(inputs, part, "claim", row["slice"])
        assert row["low"] <= wilson.low and row["high"] >= wilson.high
        assert "bootstrap over" in row["method"] and "within 2 strata" in row["method"]
    again = trend(inputs, "month", "claim", ("judge_raw",), resamples=200, seed=4)
    assert again["rows"] == found["rows"]  # seeded: the same data, the same interval
    responses = trend(inputs, "month", "response", ("judge_raw",), resamples=200, seed=4)
    assert all("bootstrap over" in row["method"] for row in responses["rows"])


def test_a_frame_row_stands_for_traces_with_the_same_claim_counts(tmp_path):
    """Undrawn traces are grouped into rows; a row's traces must be alike for the bootstrap
    to resample them as traces. Reference: each trace's counts straight from the store."""
    from annotate.ingest.importer import import_traces
    from annotate.sampling.allocation import SampleSpec
    from annotate.sampling.samples import draw_sample
    from annotate.store import open_store

    lines = []
    for i in range(60):
        claims = 1 + i % 3
        lines.append({"trace_id": f"t{i:03d}", "timestamp": "2026-03-02T10:00:00Z",
                      "feature": "qa", "request": "q", "response": "r.", "context": ["c"],
                      "claims": [{"text": f"c{k}."} for k in range(claims)],
                      "judge": [{"judge": "j", "level": "claim", "claim": k,
                                 "label": "unsupported" if (i + k) % 4 == 0 else "supported"}
                                for k in range(claims)]})  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = open_store(tmp_path / "s.duckdb")
    import_traces(store, path)
    draw_sample(store, SampleSpec(name="main", n=6, by=("feature",), seed=1))
    frame = load_inputs(store, "main", ["week"]).frame
    per_trace = sorted(
        store.fetchall(
            "SELECT count(*) FILTER (WHERE label = 'unsupported'), count(*) FROM judge_verdicts "
            "GROUP BY trace_id"
        )
    )
    store.close()
    expanded = sorted(
        (int(r.jcu) // int(r.traces), int(r.jcn) // int(r.traces))
        for r in frame.itertuples()
        for _ in range(int(r.traces))
    )
    assert expanded == per_trace
    assert (frame["jcu"] % frame["traces"] == 0).all() and (
        frame["jcn"] % frame["traces"] == 0
    ).all()
