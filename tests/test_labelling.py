"""Accounts, assignment, the labelling session (blind, append-only), adjudication."""

from __future__ import annotations

import re
import threading
from collections import Counter
from datetime import timedelta

import pytest
from labelling_data import PASSWORD, prepare

from annotate.accounts.activity import activity
from annotate.accounts.users import (
    AuthError,
    add_user,
    authenticate,
    check_password,
    create_first_lead,
    has_accounts,
    hash_password,
    list_users,
    set_active,
)
from annotate.labelling.adjudication import AdjudicationError, adjudicate, disagreements
from annotate.labelling.assignment import assign
from annotate.labelling.session import (
    SKIP_REASONS,
    LabelError,
    StaleVerdictError,
    TooSoonError,
    claim_view,
    judge_feedback,
    min_dwell,
    next_claim,
    previous_claim,
    progress,
    record_verdict,
    reveal_judge_after_submit,
    reviewer_queue,
    rubric_labels,
    set_min_dwell,
    set_reveal_judge_after_submit,
    skip_claim,
    view_after_stale,
)
from annotate.sampling.allocation import SampleError
from annotate.store import open_store


@pytest.fixture
def ready(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    return fresh_store


# -- accounts ----------------------------------------------------------------------------------


@pytest.mark.real_password_cost
def test_passwords_are_scrypt_hashed_and_salted():
    first, second = hash_password("s3cret-words"), hash_password("s3cret-words")
    assert first.startswith("scrypt$16384$8$1$") and first != second
    assert check_password("s3cret-words", first) and not check_password("s3cret-word", first)


def test_first_lead_then_login_and_deactivation(fresh_store):
    assert not has_accounts(fresh_store)
    create_first_lead(fresh_store, "lena", PASSWORD)
    with pytest.raises(AuthError, match="the first lead exists already"):
        create_first_lead(fresh_store, "mallory", PASSWORD)
    assert authenticate(fresh_store, "lena", PASSWORD).is_lead
    with pytest.raises(AuthError, match="wrong user name or password"):
        authenticate(fresh_store, "lena", "not the password")
    add_user(fresh_store, "rob", "reviewer", PASSWORD)
    set_active(fresh_store, "rob", False)
    with pytest.raises(AuthError, match="deactivated"):
        authenticate(fresh_store, "rob", PASSWORD)
    assert [(u.name, u.active) for u in list_users(fresh_store)] == [("lena", True), ("rob", False)]


def test_short_passwords_and_unknown_roles_are_refused(fresh_store):
    with pytest.raises(AuthError, match="at least 8 characters"):
        add_user(fresh_store, "x", "reviewer", "short")
    with pytest.raises(AuthError, match="must not be only spaces"):
        add_user(fresh_store, "x", "reviewer", " " * 10)
    with pytest.raises(AuthError, match="unknown role 'admin'"):
        add_user(fresh_store, "x", "admin", PASSWORD)


# -- assignment --------------------------------------------------------------------------------


def test_every_trace_gets_k_reviewers_load_balanced(ready):
    report = assign(ready, "demo", ["alice", "bob", "carol"], per_trace=2, seed=3)
    assert report.added == 24
    assert sorted(report.load.values()) == [8, 8, 8]
    per_trace = Counter(
        row[0] for row in ready.fetchall("SELECT trace_id FROM assignments WHERE active")
    )
    assert set(per_trace.values()) == {2} and len(per_trace) == 12


def test_overlap_share_single_labels_the_rest(ready):
    report = assign(ready, "demo", ["alice", "bob"], per_trace=2, overlap_share=0.5, seed=1)
    assert report.overlap_traces == 6 and report.added == 6 * 2 + 6 * 1
    assert sorted(report.load.values()) == [9, 9]


def test_each_reviewer_order_is_shuffled_by_the_seed(ready):
    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    alice = [q["trace_id"] for q in reviewer_queue(ready, "alice", "demo")][::3]
    assert alice != sorted(alice)
    other = open_store(":memory:")
    try:
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as folder:
            prepare(other, Path(folder))
            assign(other, "demo", ["alice", "bob"], per_trace=2, seed=1)
            assert [q["trace_id"] for q in reviewer_queue(other, "alice", "demo")][::3] == alice
    finally:
        other.close()


def test_reassigning_when_a_reviewer_leaves_keeps_their_done_work(ready):
    assign(ready, "demo", ["alice", "bob", "carol"], per_trace=2, seed=3)
    first_trace = reviewer_queue(ready, "carol", "demo")[0]["trace_id"]
    for _ in range(3):  # carol finishes her first trace (3 claims)
        view = next_claim(ready, "carol", "demo")
        record_verdict(ready, "carol", view, "supported")
    report = assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=3)
    assert report.released == 7
    carol = {q["trace_id"] for q in reviewer_queue(ready, "carol", "demo")}
    assert carol == {first_trace}
    covered = Counter(r[0] for r in ready.fetchall("SELECT trace_id FROM assignments WHERE active"))
    assert set(covered.values()) == {2}


def test_assigning_to_unknown_people_or_too_many_per_trace_is_refused(ready):
    with pytest.raises(SampleError, match="no active reviewer or lead account named dave"):
        assign(ready, "demo", ["alice", "dave"], per_trace=1)
    with pytest.raises(
        SampleError, match="--per-trace must be between 1 and the number of reviewers"
    ):
        assign(ready, "demo", ["alice"], per_trace=2)


# -- labelling ---------------------------------------------------------------------------------


def test_a_session_labels_goes_back_skips_and_sees_progress(ready):
    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    seen = []
    for label in ["supported", "contradicted", "supported"]:
        view = next_claim(ready, "alice", "demo")
        seen.append((view.trace_id, view.claim_index))
        record_verdict(
            ready, "alice", view, label, error_type="number" if label == "contradicted" else None
        )
    back = previous_claim(ready, "alice", "demo")
    assert (back.trace_id, back.claim_index) == seen[-1]
    record_verdict(ready, "alice", back, "not_in_context", note="changed my mind")
    skip_claim(ready, "alice", next_claim(ready, "alice", "demo"), "unclear_context")
    assert progress(ready, "alice", "demo") == {"done": 4, "assigned": 36, "skipped": 1}
    events = ready.fetchall(
        "SELECT label FROM label_events WHERE reviewer = 'alice' ORDER BY event_id"
    )
    assert [e[0] for e in events] == ["supported", "contradicted", "supported", "not_in_context"]


def _label_rest_of_trace(store, reviewer: str, view) -> None:
    """Label (supported) the claims of `view`'s trace still in the reviewer's queue."""
    while (following := next_claim(store, reviewer, "demo")) is not None:
        if following.trace_id != view.trace_id:
            break
        record_verdict(store, reviewer, following, "supported")


def test_the_view_is_blind_to_the_judge_and_to_other_reviewers(ready):
    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    view = next_claim(ready, "alice", "demo")
    assert "judge_verdicts" not in view.trace
    set_reveal_judge_after_submit(ready, True)
    assert judge_feedback(ready, "alice", view) == []  # not before she submits
    record_verdict(ready, "alice", view, "supported")
    assert judge_feedback(ready, "alice", view) == []  # nor while the trace has claims to come
    _label_rest_of_trace(ready, "alice", view)
    assert [v["label"] for v in judge_feedback(ready, "alice", view)][-1] == "unsupported"
    assert [q["label"] for q in reviewer_queue(ready, "bob", "demo") if q["label"]] == []


def test_verdicts_outside_the_rubric_or_queue_are_refused(ready):
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    with pytest.raises(LabelError, match="'wrong' is not in the active rubric"):
        record_verdict(ready, "alice", view, "wrong")
    with pytest.raises(LabelError, match="an error type goes only with an unsupported label"):
        record_verdict(ready, "alice", view, "supported", error_type="number")
    with pytest.raises(LabelError, match="is not in bob's queue"):
        record_verdict(ready, "bob", view, "supported")


def test_salient_terms_are_the_claims_numbers_names_and_dates(ready):
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    assert "INV-" in view.claim["text"]
    terms = view.salient_terms
    assert any(t.startswith("INV") for t in terms) and any(t.startswith("2026-02-") for t in terms)


def test_eight_threads_record_two_thousand_verdicts_without_loss(ready):
    reviewers = [f"r{i}" for i in range(8)]
    for name in reviewers:
        add_user(ready, name, "reviewer", PASSWORD)
    assign(ready, "demo", reviewers, per_trace=8, seed=1)
    view_by_reviewer = {r: next_claim(ready, r, "demo") for r in reviewers}
    errors = []

    def label(reviewer: str) -> None:
        session = ready.session()  # each thread its own cursor, as each browser session
        view = view_by_reviewer[reviewer]
        try:
            for i in range(250):  # each a change of the last verdict, made from it
                view.based_on = record_verdict(
                    session, reviewer, view, ("supported", "contradicted")[i % 2], note=str(i)
                )
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=label, args=(r,)) for r in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    rows = ready.fetchall(
        "SELECT reviewer, count(*), count(DISTINCT note), count(DISTINCT event_id) FROM label_events GROUP BY reviewer"
    )
    assert sorted(rows) == [(r, 250, 250, 250) for r in reviewers]


# -- adjudication ------------------------------------------------------------------------------


def test_adjudication_lists_disagreements_and_keeps_the_votes(ready):
    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    for reviewer, label in (("alice", "supported"), ("bob", "contradicted")):
        queue = reviewer_queue(ready, reviewer, "demo")
        target = sorted(queue, key=lambda q: (q["trace_id"], q["claim_index"]))[0]
        from annotate.labelling.session import claim_view

        record_verdict(
            ready,
            reviewer,
            claim_view(ready, target["trace_id"], target["claim_index"]),
            label,
            note=f"{reviewer} says",
        )
    found = disagreements(ready, "demo")
    assert len(found) == 1
    assert sorted((v["reviewer"], v["label"], v["note"]) for v in found[0]["votes"]) == [
        ("alice", "supported", "alice says"),
        ("bob", "contradicted", "bob says"),
    ]
    with pytest.raises(AdjudicationError, match="give a reason"):
        adjudicate(
            ready, "lena", found[0]["trace_id"], found[0]["claim_index"], "contradicted", " "
        )
    adjudicate(
        ready,
        "lena",
        found[0]["trace_id"],
        found[0]["claim_index"],
        "contradicted",
        "the context says $41",
    )
    after = disagreements(ready, "demo")
    assert after[0]["adjudication"]["label"] == "contradicted"
    assert disagreements(ready, "demo", include_resolved=False) == []
    assert ready.scalar("SELECT count(*) FROM label_events") == 2


def test_the_open_disagreements_counted_in_sql_are_the_ones_listed(ready):
    """A lead's path counts open disagreements in DuckDB (annotate.store.evidence), the
    Adjudicate page lists them: the same claims. Agreeing votes, a reviewer who changed their
    label to agree (the latest vote counts), an open and an adjudicated disagreement, and
    another sample's traces. Catches the count reading every event instead of the current
    ones, counting adjudicated claims, or counting agreeing claims."""
    from dataclasses import replace

    from annotate.labelling.session import claim_view
    from annotate.store.evidence import open_disagreements

    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    queue = sorted(
        reviewer_queue(ready, "alice", "demo"), key=lambda q: (q["trace_id"], q["claim_index"])
    )
    agree, changed, open_one, settled = queue[:4]

    def vote(reviewer, target, label):
        view = claim_view(ready, target["trace_id"], target["claim_index"])
        latest = ready.scalar(
            "SELECT max(event_id) FROM label_events WHERE reviewer = ? AND trace_id = ? "
            "AND claim_index = ?",
            [reviewer, target["trace_id"], target["claim_index"]],
        )
        record_verdict(ready, reviewer, replace(view, based_on=latest), label)

    for target, alice, bob in ((agree, "supported", "supported"), (changed, "supported", "contradicted"),
                               (open_one, "supported", "contradicted"), (settled, "contradicted", "supported")):  # fmt: skip
        vote("alice", target, alice)
        vote("bob", target, bob)
    assert open_disagreements(ready, "demo") == 3
    vote("bob", changed, "supported")  # bob changes his mind: they agree now
    adjudicate(
        ready,
        "lena",
        settled["trace_id"],
        settled["claim_index"],
        "contradicted",
        "the context says so",
    )
    listed = disagreements(ready, "demo", include_resolved=False)
    assert [(d["trace_id"], d["claim_index"]) for d in listed] == [
        (open_one["trace_id"], open_one["claim_index"])
    ]
    assert open_disagreements(ready, "demo") == len(listed) == 1
    assert open_disagreements(ready, None) == 1  # every labelled trace: the same claims
    assert len(disagreements(ready, "demo")) == 2  # the adjudicated one is listed as resolved


def test_gold_and_where_the_judge_disagrees_with_it(ready):
    from annotate.labelling.adjudication import gold_labels, judge_disagreements
    from annotate.labelling.session import claim_view

    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    # claim 1 of lt-000 ("The amount due is $40.00."): the judge said unsupported
    for reviewer in ("alice", "bob"):
        record_verdict(ready, reviewer, claim_view(ready, "lt-000", 1), "supported")
    record_verdict(ready, "alice", claim_view(ready, "lt-001", 1), "supported")
    record_verdict(ready, "bob", claim_view(ready, "lt-001", 1), "contradicted")
    gold = gold_labels(ready, "demo")
    assert gold[("lt-000", 1)] == "supported" and ("lt-001", 1) not in gold
    found = judge_disagreements(ready, "demo")
    assert [(f["trace_id"], f["claim_index"], f["label"], f["gold"]) for f in found] == [
        ("lt-000", 1, "unsupported", "supported")
    ]
    adjudicate(ready, "lena", "lt-001", 1, "supported", "the context says $41.00")
    assert gold_labels(ready, "demo")[("lt-001", 1)] == "supported"
    assert len(judge_disagreements(ready, "demo")) == 2


# -- the verdict path, case by case (found by mutation testing, tests/MUTATION.md) -------------


def test_the_revealed_judge_verdict_is_the_one_on_this_claim(ready):
    """Catches the judge feedback read for another claim of the trace (or none): the judge's
    claim-level verdict in the fixture is on the second claim only; it and the response
    verdict show once every claim of the trace is labelled (browser QA: it showed after the first,
    while the trace's other claims were still to label, so the reviewer was no longer blind)."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    set_reveal_judge_after_submit(ready, True)
    first = next_claim(ready, "alice", "demo")
    record_verdict(ready, "alice", first, "supported")
    assert judge_feedback(ready, "alice", first) == []  # nothing on this claim; one to come
    second = next_claim(ready, "alice", "demo")
    assert (second.trace_id, second.claim_index) == (first.trace_id, 1)
    record_verdict(ready, "alice", second, "supported")
    assert judge_feedback(ready, "alice", second) == []  # blind until the third is labelled
    third = next_claim(ready, "alice", "demo")
    assert (third.trace_id, third.claim_index) == (first.trace_id, 2)
    record_verdict(ready, "alice", third, "supported")
    assert [(v["level"], v["label"]) for v in judge_feedback(ready, "alice", second)] == [
        ("claim", "unsupported"),
        ("response", "unsupported"),
    ]
    assert [(v["level"], v["label"]) for v in judge_feedback(ready, "alice", first)] == [
        ("claim", "unsupported"),  # the trace's verdicts, whichever of its claims is asked about
        ("response", "unsupported"),
    ]


def test_reveal_turns_off_again_and_each_change_is_logged_with_its_actor(ready):
    """Catches a setting that can be turned on but never off, and an unlogged change."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    record_verdict(ready, "alice", view, "supported")
    _label_rest_of_trace(ready, "alice", view)
    set_reveal_judge_after_submit(ready, True, actor="lena")
    assert reveal_judge_after_submit(ready) and judge_feedback(ready, "alice", view)
    set_reveal_judge_after_submit(ready, False, actor="lena")
    assert not reveal_judge_after_submit(ready)
    assert judge_feedback(ready, "alice", view) == []
    logged = [(a["actor"], a["subject"], a["detail"]) for a in activity(ready, kind="setting")]
    assert logged == [
        ("lena", "reveal_judge_after_submit", {"value": True}),
        ("lena", "reveal_judge_after_submit", {"value": False}),
    ]


def test_the_minimum_dwell_is_a_logged_setting_from_0_to_10_seconds(ready):
    """Catches the default, the bounds and the unit of the dwell setting drifting."""
    assert min_dwell(ready) == timedelta(seconds=0.4)
    set_min_dwell(ready, 1.5, actor="lena")
    assert min_dwell(ready) == timedelta(seconds=1.5)
    set_min_dwell(ready, 10)
    set_min_dwell(ready, 0)
    assert min_dwell(ready) == timedelta(0)
    for bad in (-0.1, 10.5):
        with pytest.raises(LabelError, match=f"0 to 10 seconds, not {bad}"):
            set_min_dwell(ready, bad)
    assert [(a["actor"], a["subject"], a["detail"]) for a in activity(ready, kind="setting")][
        0
    ] == (
        "lena",
        "min_dwell_seconds",
        {"value": 1.5},
    )


def test_a_press_before_the_dwell_stores_nothing_and_one_after_it_does(ready):
    """Catches the dwell compared the wrong way round or not at all."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    with pytest.raises(TooSoonError, match="before the claim could be read; nothing was stored"):
        record_verdict(ready, "alice", view, "supported", min_dwell=timedelta(seconds=30))
    assert progress(ready, "alice", "demo")["done"] == 0
    view.shown_at -= timedelta(seconds=31)
    record_verdict(ready, "alice", view, "supported", min_dwell=timedelta(seconds=30))
    assert progress(ready, "alice", "demo")["done"] == 1


def test_a_repeat_is_the_same_event_a_different_verdict_is_stale_and_a_change_is_based_on_it(
    ready,
):
    """Catches a repeat stored twice, a stale verdict overwriting a newer one, and a change
    that does not name the event it changes."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    other_tab = claim_view(ready, view.trace_id, view.claim_index)
    first = record_verdict(ready, "alice", other_tab, "not_in_context", "number", note="x")
    assert record_verdict(ready, "alice", view, "not_in_context", "number", " x ") == first
    for label, error_type, note in (
        ("supported", None, None),
        ("not_in_context", "entity", "x"),
        ("not_in_context", "number", "y"),
    ):
        with pytest.raises(StaleVerdictError) as stale:
            record_verdict(ready, "alice", view, label, error_type, note)
        assert stale.value.newer["event_id"] == first
        assert re.fullmatch(
            r"this claim already has your verdict 'not_in_context' \(recorded \d\d:\d\d:\d\d, "
            r"from another tab or device\): keep it, or change it",
            str(stale.value),
        )
    fresh = view_after_stale(ready, "alice", view)
    assert (fresh.trace_id, fresh.claim_index, fresh.based_on) == (
        view.trace_id,
        view.claim_index,
        first,
    )
    assert (fresh.shown_at, fresh.position, fresh.total) == (view.shown_at, 1, 36)
    changed = record_verdict(ready, "alice", fresh, "supported")
    assert changed != first
    events = ready.fetch_dicts(
        "SELECT event_id, label, based_on FROM label_events ORDER BY event_id"
    )
    assert [(e["label"], e["based_on"]) for e in events] == [
        ("not_in_context", None),
        ("supported", first),
    ]


def test_the_labels_offered_are_the_active_rubrics(ready):
    """Catches the Label and Adjudicate pages offered another rubric's labels."""
    version, labels = rubric_labels(ready)
    assert version == 1
    assert [item["label"] for item in labels] == [
        "supported",
        "partially_supported",
        "contradicted",
        "not_in_context",
        "not_a_claim",
    ]


def test_a_skip_needs_one_of_the_reasons(ready):
    """Catches the skip reason's message losing the list of reasons."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    with pytest.raises(LabelError) as refused:
        skip_claim(ready, "alice", view, "bored")
    assert str(refused.value) == f"give a reason to skip: one of {', '.join(SKIP_REASONS)}"
    skip_claim(ready, "alice", view, SKIP_REASONS[0])
    assert progress(ready, "alice", "demo") == {"done": 1, "assigned": 36, "skipped": 1}


def test_a_second_skip_of_the_skipped_claim_stores_one_skip_unless_the_reason_changes(ready):
    """Catches a double press of S (both presses are for the claim on screen) storing two
    skips of one claim; a new reason is a new skip, and so is a skip after a verdict."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")

    def skips():
        return ready.fetchall(
            "SELECT reason FROM skip_events WHERE reviewer = 'alice' AND trace_id = ? "
            "AND claim_index = ? ORDER BY event_id",
            [view.trace_id, view.claim_index],
        )

    skip_claim(ready, "alice", view, SKIP_REASONS[0])
    skip_claim(ready, "alice", view, SKIP_REASONS[0])
    assert skips() == [(SKIP_REASONS[0],)]
    skip_claim(ready, "alice", view, SKIP_REASONS[1])
    skip_claim(ready, "alice", view, SKIP_REASONS[1])
    assert skips() == [(SKIP_REASONS[0],), (SKIP_REASONS[1],)]
    record_verdict(ready, "alice", view, "supported")
    skip_claim(ready, "alice", view, SKIP_REASONS[1])
    assert skips() == [(SKIP_REASONS[0],), (SKIP_REASONS[1],), (SKIP_REASONS[1],)]


def test_a_claim_changed_since_it_was_shown_is_refused_and_nothing_is_stored(ready):
    """Catches the shown claim's version not compared (`and` for `or`): a verdict drawn for
    text that has changed since must not land on the new text."""
    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    view.shown_at -= timedelta(seconds=5)
    ready.execute(
        "UPDATE claims SET text = text || ' (edited)' WHERE trace_id = ? AND claim_index = ?",
        [view.trace_id, view.claim_index],
    )
    message = (
        f"claim {view.claim_index + 1} of trace {view.trace_id!r} is not the one shown; "
        "nothing was stored"
    )
    with pytest.raises(LabelError) as raised:
        record_verdict(ready, "alice", view, "supported")
    assert str(raised.value) == message
    assert progress(ready, "alice", "demo")["done"] == 0


def test_refusals_say_what_to_do_and_a_stored_verdict_keeps_what_was_shown(ready):
    """Catches the refusals' messages lost, and the event's shown time, claim version or an
    empty note stored wrongly."""
    import hashlib

    from annotate.labelling.session import ERROR_TYPES

    assign(ready, "demo", ["alice"], per_trace=1, seed=1)
    view = next_claim(ready, "alice", "demo")
    assert (view.position, view.total) != (None, None)
    assert claim_view(ready, view.trace_id, view.claim_index).position == 0
    assert claim_view(ready, view.trace_id, view.claim_index).total == 0
    with pytest.raises(TooSoonError) as raised:
        record_verdict(ready, "alice", view, "supported", min_dwell=timedelta(seconds=30))
    assert str(raised.value) == (
        "that key press came before the claim could be read; nothing was stored. "
        "Read the claim, then press again."
    )
    view.shown_at -= timedelta(seconds=5)
    with pytest.raises(LabelError) as raised:
        record_verdict(ready, "alice", view, "contradicted", error_type="bogus")
    assert (
        str(raised.value) == f"'bogus' is not an error type; use one of: {', '.join(ERROR_TYPES)}"
    )
    with pytest.raises(LabelError) as raised:
        record_verdict(ready, "alice", view, "maybe")
    assert str(raised.value).startswith(
        "'maybe' is not in the active rubric; use one of: supported, "
    )
    record_verdict(ready, "alice", view, "supported")
    shown_at, version, note = ready.fetchall(
        "SELECT shown_at, claim_version, note FROM label_events WHERE reviewer = 'alice'"
    )[0]
    assert shown_at == view.shown_at and note is None
    assert version == hashlib.sha256(view.claim["text"].encode()).hexdigest()[:16]
    set_active(ready, "alice", False)
    with pytest.raises(LabelError) as raised:
        record_verdict(ready, "alice", view, "supported")
    assert str(raised.value) == "the account 'alice' is not active; nothing was stored"


def test_a_claim_view_of_a_missing_trace_or_claim_says_which(ready):
    """Catches the refusals of claim_view lost or turned into another exception."""
    with pytest.raises(LabelError) as raised:
        claim_view(ready, "no-such-trace", 0)
    assert str(raised.value) == "no trace 'no-such-trace'"
    trace = ready.fetchall("SELECT trace_id FROM claims ORDER BY trace_id LIMIT 1")[0][0]
    with pytest.raises(LabelError) as raised:
        claim_view(ready, trace, 99)
    assert str(raised.value) == f"trace {trace!r} has no claim 99"


def test_reopen_lists_own_recent_verdicts_and_unlabelled_skips_newest_first(ready):
    """Catches the reopen lists (the Label page's Reopen panel) showing another reviewer's
    verdicts, an old verdict instead of the latest, skips already labelled since, the wrong
    order, or more than RECENT; and reopening a trace outside the reviewer's queue."""
    from annotate.labelling.session import (
        RECENT,
        my_verdict,
        recent_verdicts,
        reopen_claim,
        skipped_claims,
    )

    assign(ready, "demo", ["alice", "bob"], per_trace=2, seed=1)
    assert recent_verdicts(ready, "alice", "demo") == []
    assert skipped_claims(ready, "alice", "demo") == []
    given = []
    for number in range(RECENT + 2):
        view = next_claim(ready, "alice", "demo")
        label = "contradicted" if number % 3 == 0 else "supported"
        record_verdict(ready, "alice", view, label, note=f"n{number}")
        given.append(((view.trace_id, view.claim_index), label))
    bob_view = next_claim(ready, "bob", "demo")
    record_verdict(ready, "bob", bob_view, "not_in_context")
    first_key, _ = given[0]
    changed = reopen_claim(ready, "alice", *first_key)
    assert changed.based_on is not None
    record_verdict(ready, "alice", changed, "not_in_context", error_type="entity", note="again")
    skipped = next_claim(ready, "alice", "demo")
    skip_claim(ready, "alice", skipped, "unclear_context")
    later = next_claim(ready, "alice", "demo")
    skip_claim(ready, "alice", later, "other")

    recent = recent_verdicts(ready, "alice", "demo")
    assert len(recent) == RECENT
    assert (recent[0]["trace_id"], recent[0]["claim_index"]) == first_key  # changed last
    assert (recent[0]["label"], recent[0]["error_type"], recent[0]["note"]) == (
        "not_in_context",
        "entity",
        "again",
    )
    expected = [key for key, _ in reversed(given[1:])][: RECENT - 1]
    assert [(r["trace_id"], r["claim_index"]) for r in recent[1:]] == expected
    assert all(r["claim"] for r in recent)
    assert {r["label"] for r in recent} <= {"supported", "contradicted", "not_in_context"}

    skips = skipped_claims(ready, "alice", "demo")
    assert [(s["trace_id"], s["claim_index"], s["reason"]) for s in skips] == [
        (later.trace_id, later.claim_index, "other"),
        (skipped.trace_id, skipped.claim_index, "unclear_context"),
    ]
    again = reopen_claim(ready, "alice", later.trace_id, later.claim_index)
    record_verdict(ready, "alice", again, "supported")
    assert [s["trace_id"] for s in skipped_claims(ready, "alice", "demo")] == [skipped.trace_id]
    assert skipped_claims(ready, "bob", "demo") == []

    mine = my_verdict(ready, "alice", changed)
    assert (mine["label"], mine["error_type"], mine["note"]) == (
        "not_in_context",
        "entity",
        "again",
    )
    assert my_verdict(ready, "bob", bob_view)["label"] == "not_in_context"
    alice_only = next(key for key, _ in given if key != (bob_view.trace_id, bob_view.claim_index))
    assert my_verdict(ready, "bob", claim_view(ready, *alice_only)) is None
    with pytest.raises(LabelError, match="trace 'lt-999' is not in alice's queue"):
        reopen_claim(ready, "alice", "lt-999", 0)


def test_the_passages_shown_are_the_context_sentences_sharing_most_with_the_claim(ready):
    """Catches the tinted passages of the context (the reviewer's guide to where to look)
    ranked wrongly or cut to the wrong number."""
    from annotate.labelling.session import ClaimView

    contexts = [
        {"position": 0, "source": "a", "text": "Nothing here. The refund was 40 dollars in March."},
        {"position": 1, "source": "b", "text": "The refund of 40 dollars reached Ana in March."},
        {"position": 2, "source": "c", "text": "Ana called in May."},
    ]
    view = ClaimView(
        "t", 0, {"claim_index": 0, "text": "Ana got a refund of 40 dollars in March."},
        {"trace_id": "t", "contexts": contexts}, 1, 1,
    )  # fmt: skip
    best = view.passages()
    assert len(best) == 2
    assert best[0][:3] == (1, 0, len(contexts[1]["text"]))
    assert best[1][0] == 0 and contexts[0]["text"][best[1][1] : best[1][2]].startswith("The refund")
    assert best[0][3] > best[1][3] > 0
    assert len(view.passages(top=1)) == 1
    more = view.passages(top=4)  # two by default; "Nothing here." shares nothing: never listed
    assert more[:2] == best and len(more) == 3 and more[2][0] == 2
