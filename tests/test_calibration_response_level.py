"""A claim-level judge's response verdict has one definition (stats.gold.judge_response_outcome):
unsupported if it called any claim unsupported, supported if it judged every claim of the
response supported, else none. Calibration, rates and plan-labels count the same responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate.agreement.calibration import calibration
from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.rates.budget import plan_labels
from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import load_inputs
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.stats.gold import judge_response_outcome
from annotate.store import open_store

# what the judge said on each trace's two claims (None: no verdict on that claim)
KINDS = {
    "both_supported": ("supported", "supported"),
    "one_unsupported": ("supported", "unsupported"),
    "one_abstained": ("supported", "unknown"),
    "one_unjudged": ("supported", None),
}
PER_KIND = 12


def _trace(kind: str, i: int) -> dict:
    verdicts = [
        {"judge": "ours", "level": "claim", "claim": index, "label": label}
        for index, label in enumerate(KINDS[kind])
        if label is not None
    ]
    texts = [f"Claim one of {kind} {i}.", f"Claim two of {kind} {i}."]
    return {
        "trace_id": f"{kind}-{i:02d}", "feature": "qa", "risk_category": "low",
        "request": "q", "response": " ".join(texts), "context": ["ctx"],
        "claims": [{"text": t} for t in texts], "judge": verdicts,
    }  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder: Path = tmp_path_factory.mktemp("response_level")
    traces = [_trace(kind, i) for kind in KINDS for i in range(PER_KIND)]
    (folder / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    labels = [
        {"trace_id": t["trace_id"], "claim": index, "reviewer": reviewer,
         "label": "contradicted" if i % 3 == 0 and index == 1 else "supported"}
        for i, t in enumerate(traces) for index in (0, 1) for reviewer in ("rita", "rolf")
    ]  # fmt: skip
    (folder / "l.jsonl").write_text("".join(json.dumps(row) + "\n" for row in labels))
    opened = open_store(folder / "s.duckdb")
    import_traces(opened, folder / "t.jsonl")
    draw_sample(opened, SampleSpec(name="main", n=len(traces), by=("feature",), seed=1))
    import_labels(opened, folder / "l.jsonl")
    yield opened
    opened.close()


def test_calibration_rates_and_plan_labels_count_the_same_response_units(store):
    """Catches calibration --level response finding 0 units with gold for a claim-level judge
    while rates and plan-labels counted it judged every response with any supported claim."""
    judged = 2 * PER_KIND  # both supported, one unsupported; the rest are left open
    found = calibration(store, "ours", "main", level="response", repetitions=50)
    assert found["n"] == judged
    assert found["gold"]["units_with_gold"] == 4 * PER_KIND
    assert found["coverage"]["abstained"] == 2 * PER_KIND
    inputs = load_inputs(store, "main", (), "ours")
    rows = rate_rows(inputs, (), ["response"], ("judge_corrected",), resamples=50)
    assert [row["n"] for row in rows] == [judged]
    plan = plan_labels(inputs, 0.2)
    assert sum(stratum["pairs"] for stratum in plan["strata"]) == judged


@pytest.mark.parametrize(
    ("response", "unsupported", "supported", "claims", "outcome"),
    [
        ("unsupported", 0, 3, 3, "unsupported"),  # its own response verdict decides
        ("abstained", 1, 0, 3, "unsupported"),
        (None, 1, 2, 3, "unsupported"),
        (None, 0, 3, 3, "supported"),
        (None, 0, 2, 3, None),  # a claim abstained on or never judged leaves it open
        (None, 0, 0, 0, None),
    ],
)
def test_the_one_definition(response, unsupported, supported, claims, outcome):
    assert judge_response_outcome(response, unsupported, supported, claims) == outcome
