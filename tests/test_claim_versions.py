"""A lead's new version of a flagged claim: old labels stay in the ledger, the new claims reach the
queues, and statistics count the current version only."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from labelling_data import prepare

from annotate.accounts.activity import activity
from annotate.agreement.reliability import agreement
from annotate.claims.extraction import ClaimsError, ClaimSpan, claim_flags, flag_claim
from annotate.claims.versions import correct_claim, merge_claims, retired_versions, split_claim
from annotate.labelling.assignment import assign
from annotate.labelling.evidence import load_evidence
from annotate.labelling.session import claim_view, record_verdict, reviewer_queue
from annotate.rates.inputs import gold_tables
from annotate.stats.gold import claim_gold

BINARY = {"supported": 0, "partially_supported": 1, "contradicted": 1, "not_in_context": 1}


@pytest.fixture
def labelled(fresh_store, tmp_path):
    """Sample `demo` of 12 traces x 3 claims, alice and bob on every trace; both labelled lt-000
    and lt-001, disagreeing on lt-000's first claim, which alice flagged as not atomic."""
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice", "bob"], per_trace=2, seed=0, assigned_by="lena")
    for trace in ("lt-000", "lt-001"):
        for index in range(3):
            for reviewer in ("alice", "bob"):
                label = (
                    "contradicted"
                    if (reviewer, trace, index) == ("bob", "lt-000", 0)
                    else "supported"
                )
                record_verdict(fresh_store, reviewer, claim_view(fresh_store, trace, index), label)
    flag_claim(fresh_store, "lt-000", 0, "alice", "not_atomic", "two facts")
    return fresh_store


def _events(store, trace_id, claim_index):
    return store.fetchall(
        "SELECT reviewer, label FROM label_events WHERE trace_id = ? AND claim_index = ? "
        "ORDER BY reviewer",
        [trace_id, claim_index],
    )


def test_a_flagged_claim_split_in_two_keeps_old_labels_reaches_queues_and_counts_new(labelled):
    store = labelled
    old_events = _events(store, "lt-000", 0)
    assert old_events == [("alice", "supported"), ("bob", "contradicted")]
    parts = [
        ClaimSpan("Invoice INV-1000 was issued", None, None),  # found in the response
        ClaimSpan("The invoice date is 2026-02-01.", None, None),  # the lead's own wording
    ]
    revision = split_claim(store, "lt-000", 0, parts, "lena")
    assert revision.retired == [0] and revision.created == [3, 4]

    # the ledger keeps the old labels; the old version is kept with what replaced it
    assert _events(store, "lt-000", 0) == old_events
    [old] = retired_versions(store, "lt-000")
    assert (old["claim_index"], old["action"], old["retired_by"]) == (0, "split", "lena")
    assert old["text"] == "Invoice INV-1000 was issued on 2026-02-01."
    current = store.fetchall(
        "SELECT claim_index, text, start_offset, end_offset, origin FROM claims "
        "WHERE trace_id = 'lt-000' ORDER BY claim_index"
    )
    assert [row[0] for row in current] == [1, 2, 3, 4]
    assert current[2][1:] == ("Invoice INV-1000 was issued", 0, 27, "revised")
    assert current[3][1:] == ("The invoice date is 2026-02-01.", None, None, "revised")
    flags = claim_flags(store, "demo")
    assert [(f["claim_index"], f["status"]) for f in flags] == [(0, "split")]

    # the two new claims are in both reviewers' queues, unlabelled; the old one is not
    for reviewer in ("alice", "bob"):
        queue = {
            (i["trace_id"], i["claim_index"]): i for i in reviewer_queue(store, reviewer, "demo")
        }
        assert ("lt-000", 0) not in queue
        assert queue[("lt-000", 3)]["label"] is None and queue[("lt-000", 4)]["label"] is None
        record_verdict(store, reviewer, claim_view(store, "lt-000", 3), "supported")
        second = "not_in_context" if reviewer == "bob" else "supported"
        record_verdict(store, reviewer, claim_view(store, "lt-000", 4), second)

    # statistics count the new claims, not the old one
    evidence = load_evidence(store, "demo")
    units = {(v["trace_id"], v["claim_index"]) for v in evidence.votes}
    assert ("lt-000", 0) not in units and {("lt-000", 3), ("lt-000", 4)} <= units
    gold = claim_gold(evidence)
    assert ("lt-000", 0) not in gold and gold[("lt-000", 3)].binary == "supported"
    claims, _ = gold_tables(store, "demo")
    assert ("lt-000", 0) not in set(zip(claims.trace_id, claims.claim_index, strict=True))
    assert len(claims) == 6  # lt-000: 1, 2, 3 (4 is unresolved); lt-001: 0, 1, 2

    # agreement against the krippendorff package on the current claims' votes only
    rows = store.fetchall(
        "SELECT e.trace_id, e.claim_index, e.reviewer, arg_max(e.label, e.event_id) FROM label_events e "
        "WHERE (e.trace_id, e.claim_index) IN (SELECT (trace_id, claim_index) FROM claims) "
        "GROUP BY ALL ORDER BY ALL"
    )
    table: dict[tuple[str, int], dict[str, int]] = {}
    for trace, index, reviewer, label in rows:
        table.setdefault((trace, index), {})[reviewer] = BINARY[label]
    data = np.array([[t[r] for t in table.values()] for r in ("alice", "bob")], dtype=float)
    document = agreement(store, "demo", repetitions=50)
    assert document["units"] == len(table) == 7
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert document["krippendorff_alpha"]["value"] == pytest.approx(expected)
    assert document["percent_agreement"]["value"] == pytest.approx(6 / 7)

    acts = activity(store, kind="claim_revision")
    assert acts[-1]["actor"] == "lena" and acts[-1]["subject"] == "lt-000"


def test_before_the_split_the_old_disagreement_counts(labelled):
    """The same statistics before the split: the claim that will be retired is in them."""
    document = agreement(labelled, "demo", repetitions=50)
    assert document["units"] == 6
    assert document["percent_agreement"]["value"] == pytest.approx(5 / 6)


def test_merge_and_correct_make_new_versions_with_checked_offsets(labelled):
    store = labelled
    merged = ClaimSpan("The amount due is $40.00. Refunds take 5 business days.", None, None)
    revision = merge_claims(store, "lt-000", [1, 2], merged, "lena")
    assert revision.retired == [1, 2] and revision.created == [3]
    row = store.fetchone(
        "SELECT start_offset, end_offset FROM claims WHERE trace_id = 'lt-000' AND claim_index = 3"
    )
    response = store.scalar("SELECT response FROM traces WHERE trace_id = 'lt-000'")
    assert response[row[0] : row[1]] == merged.text
    fixed = correct_claim(
        store, "lt-000", 3, ClaimSpan("Refunds take 5 business days.", None, None), "lena"
    )
    assert fixed.created == [4]
    assert [r["claim_index"] for r in retired_versions(store, "lt-000")] == [1, 2, 3]


def test_bad_revisions_are_refused_and_change_nothing(labelled):
    store = labelled
    before = store.fetchall("SELECT * FROM claims ORDER BY trace_id, claim_index")
    with pytest.raises(ClaimsError, match="at least two parts"):
        split_claim(store, "lt-000", 0, [ClaimSpan("x", None, None)], "lena")
    with pytest.raises(ClaimsError, match="new claim 2 has no text"):
        split_claim(
            store, "lt-000", 0, [ClaimSpan("a", None, None), ClaimSpan("  ", None, None)], "lena"
        )
    with pytest.raises(ClaimsError, match=r"new claim 1: \[0:5\] is 'Invoi'"):
        correct_claim(store, "lt-000", 0, ClaimSpan("Nowhere in it", 0, 5), "lena")
    with pytest.raises(ClaimsError, match="has no current claim 10"):
        correct_claim(store, "lt-000", 9, ClaimSpan("Refunds", None, None), "lena")
    with pytest.raises(ClaimsError, match="at least two claims"):
        merge_claims(store, "lt-000", [1, 1], ClaimSpan("x", None, None), "lena")
    assert store.fetchall("SELECT * FROM claims ORDER BY trace_id, claim_index") == before
    assert retired_versions(store) == []


def test_back_and_the_load_table_skip_a_replaced_claim(labelled):
    """alice's last verdict was on lt-001's third claim; once it is replaced, Back opens her
    verdict before it, and the load table counts current claims only."""
    from annotate.labelling.session import previous_claim
    from annotate.store.assignments import sample_load

    store = labelled
    before = {row["reviewer"]: row["claims_labelled"] for row in sample_load(store, "demo")}
    assert previous_claim(store, "alice", "demo").claim_index == 2
    correct_claim(store, "lt-001", 2, ClaimSpan("Refunds take 5 business days", None, None), "lena")
    back = previous_claim(store, "alice", "demo")
    assert (back.trace_id, back.claim_index) == ("lt-001", 1)
    after = {row["reviewer"]: row["claims_labelled"] for row in sample_load(store, "demo")}
    assert after == {name: count - 1 for name, count in before.items()} == {"alice": 5, "bob": 5}


def test_labels_made_elsewhere_name_the_current_version(labelled, tmp_path):
    """Catches `annotate import-labels` counting claims instead of reading their indexes: after a
    split the trace's claims are 1 to 4, so a label for claim 4 is kept and one for the
    replaced claim 0 is refused by line, naming the claims there are."""
    import json

    from annotate.ingest.labels import import_labels

    split_claim(
        labelled,
        "lt-000",
        0,
        [
            ClaimSpan("Invoice INV-1000 was issued", None, None),
            ClaimSpan("It is dated 2026-02-01.", None, None),
        ],
        "lena",
    )
    path = tmp_path / "labels.jsonl"
    rows = [
        {"trace_id": "lt-000", "claim": 4, "reviewer": "carol", "label": "supported"},
        {"trace_id": "lt-000", "claim": 0, "reviewer": "carol", "label": "supported"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = import_labels(labelled, path)
    assert (report.imported, report.rejected) == (1, 1)
    [error] = report.errors
    assert (error.line, error.field) == (2, "claim")
    assert (
        error.message == "trace 'lt-000' has current claims 1, 2, 3, 4, so claim 0 does not exist"
    )
    assert _events(labelled, "lt-000", 4) == [("carol", "supported")]
