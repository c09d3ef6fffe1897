"""What the speed work must not change: the numbers, the counts, and when a page recomputes.

Timings are in tests/bench/; these tests pin behaviour only.
"""

from __future__ import annotations

import numpy as np
import pytest
from labelling_data import prepare

from annotate.agreement.calibration import calibration, save_thresholds
from annotate.labelling.assignment import assign
from annotate.labelling.session import claim_view, record_verdict
from annotate.stats.intervals import resample_weights, shared_resamples
from annotate.store import evidence as evidence_sql
from annotate.store.status import change_mark

JUDGE = "prod-judge-v3"


@pytest.fixture
def half_labelled(fresh_store, tmp_path):
    """12 traces with judge verdicts; alice and bob label the claims of the first 6 only."""
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    for t in range(6):
        for claim in range(3):
            label = "contradicted" if claim == 1 else "supported"
            for reviewer in ("alice", "bob"):
                view = claim_view(fresh_store, f"lt-{t:03d}", claim)
                record_verdict(fresh_store, reviewer, view, label)
    return fresh_store


def test_whole_store_calibration_reads_verdicts_of_labelled_traces_only(half_labelled):
    read = evidence_sql.verdicts(half_labelled, None, JUDGE, "claim")
    assert {row["trace_id"] for row in read} == {f"lt-{t:03d}" for t in range(6)}
    assert {row["level"] for row in read} == {"claim"}


def test_judged_without_gold_still_counts_the_unlabelled_traces(half_labelled):
    judged_claims = half_labelled.scalar(
        "SELECT count(*) FROM (SELECT DISTINCT trace_id, claim_index FROM judge_verdicts "
        "WHERE judge = ? AND level = 'claim')",
        [JUDGE],
    )
    assert judged_claims == 12  # the judge flags claim 1 of each of the 12 traces
    for scope in (None, "demo"):
        result = calibration(half_labelled, JUDGE, scope)
        with_gold = result["coverage"]["units"]
        assert with_gold == 6  # claim 1 of the six labelled traces
        assert result["gold"]["judged_without_gold"] == judged_claims - with_gold


def test_shared_resamples_draw_each_matrix_once_with_the_same_numbers():
    groups = ["t1", "t1", "t2", "t3", "t3", "t4", "t5", "t6"]
    strata = ["a", "a", "a", "a", "a", "b", "b", "b"]
    alone = resample_weights(groups, 300, 7, strata)
    assert resample_weights(groups, 300, 7, strata)[0] is not alone[0]  # nothing shared outside
    with shared_resamples():
        first = resample_weights(groups, 300, 7, strata)
        again = resample_weights(groups, 300, 7, strata)
        other_seed = resample_weights(groups, 300, 8, strata)
        with shared_resamples():  # nested: the same store of matrices
            inner = resample_weights(groups, 300, 7, strata)
    assert again[0] is first[0] and inner[0] is first[0]
    np.testing.assert_array_equal(first[0], alone[0])
    np.testing.assert_array_equal(first[1], alone[1])
    assert first[2] == alone[2] == 2
    assert not np.array_equal(other_seed[0], first[0])
    with pytest.raises(ValueError):
        first[0][0, 0] = 5  # a shared matrix is read-only


def test_change_mark_moves_with_each_input_of_the_statistics(half_labelled):
    store = half_labelled
    before = change_mark(store)
    assert change_mark(store) == before  # reading changes nothing
    record_verdict(store, "alice", claim_view(store, "lt-006", 0), "supported")
    after_label = change_mark(store)
    assert after_label != before
    save_thresholds(store, {"cohen_kappa": 0.5}, actor="lena")
    after_setting = change_mark(store)
    assert after_setting != after_label
    store.execute("UPDATE settings SET value = '1' WHERE key = 'readiness'")  # not via an act
    assert change_mark(store) != after_setting
