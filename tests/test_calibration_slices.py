"""Per-slice calibration and clustered judge errors, on slices large enough to be reported.

Expected figures are counted here from the rows this test writes, not taken from the code.
"""

from __future__ import annotations

import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from annotate.accounts.users import add_user
from annotate.agreement.calibration import calibration
from annotate.ingest.importer import import_traces
from annotate.labelling.assignment import assign
from annotate.labelling.session import claim_view, record_verdict
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample

JUDGE = "slice-judge"
CLAIMS = 4


def truth_and_judge(feature: str, t: int, claim: int) -> tuple[str, str]:
    """Gold and the judge's label. billing: the judge misses every unsupported claim of some
    traces (errors clustered in traces); hr: the judge is right but for a few false alarms."""
    unsupported = claim % 2 == 0
    if feature == "billing":
        missed = unsupported and t % 3 == 0  # whole traces where the judge sees nothing
        judge = "supported" if missed or not unsupported else "unsupported"
    else:
        alarm = not unsupported and t % 5 == 0
        judge = "unsupported" if unsupported or alarm else "supported"
    return ("contradicted" if unsupported else "supported"), judge


@pytest.fixture
def sliced(fresh_store, tmp_path):
    rows = []
    for feature, count in (("billing", 15), ("hr", 12)):
        for t in range(count):
            sentences = [f"Fact {k} of {feature} {t}." for k in range(CLAIMS)]
            rows.append(
                {
                    "trace_id": f"{feature}-{t:02d}",
                    "feature": feature,
                    "response": " ".join(sentences),
                    "context": ["ctx"],
                    "claims": sentences,
                    "judge": [
                        {
                            "judge": JUDGE,
                            "level": "claim",
                            "claim": k,
                            "label": truth_and_judge(feature, t, k)[1],
                        }
                        for k in range(CLAIMS)
                    ],  # fmt: skip
                }
            )
    path = tmp_path / "sliced.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_traces(fresh_store, path)
    draw_sample(fresh_store, SampleSpec(name="s", n=len(rows), by=("feature",), seed=1))
    for name in ("ann", "ben"):
        add_user(fresh_store, name, "reviewer", "a long passphrase")
    assign(fresh_store, "s", ["ann", "ben"], per_trace=2, seed=1)
    for row in rows:
        feature, t = row["feature"], int(row["trace_id"].split("-")[1])
        for k in range(CLAIMS):
            label = truth_and_judge(feature, t, k)[0]
            for reviewer in ("ann", "ben"):
                record_verdict(
                    fresh_store, reviewer, claim_view(fresh_store, row["trace_id"], k), label
                )
    return fresh_store, rows


def counted(rows, feature: str | None) -> dict[str, int]:
    cells = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for row in rows:
        if feature and row["feature"] != feature:
            continue
        t = int(row["trace_id"].split("-")[1])
        for k in range(CLAIMS):
            gold, judge = truth_and_judge(row["feature"], t, k)
            positive, flagged = gold != "supported", judge == "unsupported"
            cells[("t" if positive == flagged else "f") + ("p" if flagged else "n")] += 1
    return cells


def test_every_slice_has_its_own_figures(sliced):
    """Catches: every slice given the overall figures (slices of >= 20 gold units)."""
    store, rows = sliced
    result = calibration(store, JUDGE, "s", by=("feature",))
    assert result["confusion"] == counted(rows, None)
    by_slice = {s["slice"]["feature"]: s for s in result["slices"]}
    for feature in ("billing", "hr"):
        cells, entry = counted(rows, feature), by_slice[feature]
        assert entry["n"] == sum(cells.values()) >= 20
        assert entry["sensitivity"]["value"] == pytest.approx(
            cells["tp"] / (cells["tp"] + cells["fn"])
        )
        assert entry["specificity"]["value"] == pytest.approx(
            cells["tn"] / (cells["tn"] + cells["fp"])
        )
    assert (
        by_slice["billing"]["sensitivity"]["value"] < 1.0 == by_slice["hr"]["sensitivity"]["value"]
    )


def test_clustered_misses_widen_the_interval_below_wilson(sliced):
    """Catches: the trace bootstrap ignored (Wilson alone) when a judge's misses cluster in traces.

    billing's misses are whole traces, so its claims are not independent: the interval that
    resamples traces must reach lower than Wilson's, which treats the claims as independent."""
    store, rows = sliced
    billing = {
        s["slice"]["feature"]: s for s in calibration(store, JUDGE, "s", by=("feature",))["slices"]
    }["billing"]
    cells = counted(rows, "billing")
    wilson_low, _ = proportion_confint(cells["tp"], cells["tp"] + cells["fn"], method="wilson")
    assert billing["sensitivity"]["low"] < wilson_low - 0.02
    assert "bootstrap" in billing["sensitivity"]["method"].lower()
