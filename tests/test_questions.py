"""Questions to the leads, and a reviewer's recent verdicts and skips to reopen."""

from __future__ import annotations

import pytest
from labelling_data import prepare
from test_roles import seeded  # noqa: F401 - the roles' store: unique judge and bob strings

from annotate.accounts.activity import activity
from annotate.labelling.assignment import assign
from annotate.labelling.questions import (
    REVIEWER_FIELDS,
    QuestionError,
    all_questions,
    answer_question,
    ask_question,
    my_questions,
    open_questions,
)
from annotate.labelling.session import (
    LabelError,
    claim_view,
    my_verdict,
    next_claim,
    recent_verdicts,
    record_verdict,
    reopen_claim,
    skip_claim,
    skipped_claims,
)
from annotate.store import open_store


@pytest.fixture
def ready(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    return fresh_store


def test_a_reviewer_asks_a_lead_answers_and_the_reviewer_reads_the_answer(ready):
    number = ask_question(ready, "alice", "lt-000", 1, "  Is a refund a credit here? ", "demo")
    (asked,) = open_questions(ready)
    assert (asked["id"], asked["question"], asked["reviewer"]) == (
        number,
        "Is a refund a credit here?",
        "alice",
    )
    assert asked["claim"] == "The amount due is $40.00."
    answer_question(ready, number, "No: a credit stays on the account.", "lena")
    assert open_questions(ready) == []
    (mine,) = my_questions(ready, "alice", "lt-000", 1)
    assert mine["answer"] == "No: a credit stays on the account."
    answer_question(ready, number, "Correction: yes, here it is.", "lena")
    assert my_questions(ready, "alice")[0]["answer"] == "Correction: yes, here it is."
    acts = [(a["actor"], a["kind"]) for a in activity(ready) if a["kind"] in ("question", "answer")]
    assert sorted(acts) == [("alice", "question"), ("lena", "answer"), ("lena", "answer")]


def test_a_reviewer_reads_only_their_own_questions_and_no_label_or_judge(ready):
    record_verdict(ready, "bob", claim_view(ready, "lt-000", 1), "contradicted", None, "BOB-NOTE")
    ask_question(ready, "bob", "lt-000", 1, "BOB-QUESTION: I said contradicted, right?")
    ask_question(ready, "alice", "lt-000", 1, "Which date counts?")
    mine = my_questions(ready, "alice")
    assert [q["question"] for q in mine] == ["Which date counts?"]
    assert set(mine[0]) == set(REVIEWER_FIELDS)
    shown = repr(mine)
    for secret in ("BOB", "contradicted", "prod-judge-v3", "unsupported"):
        assert secret not in shown
    assert len(all_questions(ready)) == 2


def test_bad_questions_and_answers_are_refused_with_the_fix(ready):
    with pytest.raises(QuestionError, match="the question is empty: write it"):
        ask_question(ready, "alice", "lt-000", 0, "   ")
    with pytest.raises(QuestionError, match="keep it under 4,000"):
        ask_question(ready, "alice", "lt-000", 0, "x" * 4001)
    with pytest.raises(QuestionError, match="is not in carol's queue"):
        ask_question(ready, "carol", "lt-000", 0, "why?")
    with pytest.raises(QuestionError, match="has no claim 10"):
        ask_question(ready, "alice", "lt-000", 9, "why?")
    number = ask_question(ready, "alice", "lt-000", 0, "why?")
    with pytest.raises(QuestionError, match="only an active lead answers questions, not 'bob'"):
        answer_question(ready, number, "because", "bob")
    with pytest.raises(QuestionError, match="there is no question 999"):
        answer_question(ready, 999, "because", "lena")
    with pytest.raises(QuestionError, match="the answer is empty"):
        answer_question(ready, number, "", "lena")
    assert ready.scalar("SELECT count(*) FROM questions") == 1
    assert ready.scalar("SELECT count(*) FROM question_answers") == 0


def test_back_and_reopen_show_the_verdict_given_and_skips_are_listed_until_labelled(ready):
    views = []
    for label in ("supported", "contradicted", "not_in_context"):
        view = next_claim(ready, "alice", "demo")
        views.append(view)
        error = "number" if label == "contradicted" else None
        record_verdict(ready, "alice", view, label, error, f"note {label}")
    skipped = next_claim(ready, "alice", "demo")
    skip_claim(ready, "alice", skipped, "unclear_context")
    recent = recent_verdicts(ready, "alice", "demo")
    assert [r["label"] for r in recent] == ["not_in_context", "contradicted", "supported"]
    assert recent[1]["error_type"] == "number" and recent[1]["note"] == "note contradicted"
    assert [(s["trace_id"], s["claim_index"]) for s in skipped_claims(ready, "alice", "demo")] == [
        (skipped.trace_id, skipped.claim_index)
    ]
    again = reopen_claim(ready, "alice", views[1].trace_id, views[1].claim_index)
    given = my_verdict(ready, "alice", again)
    assert (given["label"], given["error_type"], given["note"]) == (
        "contradicted",
        "number",
        "note contradicted",
    )
    record_verdict(ready, "alice", again, "supported", None, "changed")
    assert recent_verdicts(ready, "alice", "demo")[0]["label"] == "supported"
    reopened = reopen_claim(ready, "alice", skipped.trace_id, skipped.claim_index)
    record_verdict(ready, "alice", reopened, "supported")
    assert skipped_claims(ready, "alice", "demo") == []
    with pytest.raises(LabelError, match="not in carol's queue"):
        reopen_claim(ready, "carol", skipped.trace_id, skipped.claim_index)


def test_recent_verdicts_are_the_last_twenty_and_only_the_reviewers_own(ready):
    for _ in range(24):
        view = next_claim(ready, "alice", "demo")
        record_verdict(ready, "alice", view, "supported")
    view = next_claim(ready, "bob", "demo")
    record_verdict(ready, "bob", view, "contradicted")
    recent = recent_verdicts(ready, "alice", "demo")
    assert len(recent) == 20 and {r["label"] for r in recent} == {"supported"}


# -- the pages: Label (ask, read the answer), Questions (a lead answers) -------------------------


def test_on_the_pages_a_reviewer_asks_a_lead_answers_and_nothing_else_reaches_the_reviewer(
    seeded,  # noqa: F811 - the fixture imported above
):
    from conftest import button_for, open_panel, run_app
    from test_roles import (
        JUDGE_EXPLANATION,
        JUDGE_LABEL,
        JUDGE_NAME,
        OTHER_NOTE,
        USERS,
        rendered,
    )

    store = open_store(seeded)
    view = next_claim(store, "bob", "demo")
    ask_question(store, "bob", view.trace_id, view.claim_index, "BOB-QUESTION-77 " + OTHER_NOTE)
    store.close()
    alice = open_panel(run_app(USERS["reviewer"], "pages/label.py"), "label_ask_box")
    alice.text_area(key="label_question").input("Is a refund the same as a credit here?")
    button_for(alice, "label_ask_").click().run()
    assert not alice.exception, alice.exception
    lead = run_app(USERS["lead"], "pages/questions.py")
    assert "2 open · 0 answered" in [c.value for c in lead.caption]
    lead.selectbox(key="questions_pick").select(1)  # oldest first: bob's, then alice's
    lead.run()
    page = rendered(lead)
    assert "Is a refund the same as a credit here?" in page and "lt-0" in page  # claim, context
    lead.text_area(key="questions_answer").input("No: a credit stays on the account.")
    lead.button(key="questions_send").click().run()
    assert not lead.exception, lead.exception
    assert "1 open · 1 answered" in [c.value for c in lead.caption]
    alice.run()
    page = rendered(alice)
    assert "No: a credit stays on the account." in page
    for secret in (JUDGE_LABEL, JUDGE_EXPLANATION, JUDGE_NAME, OTHER_NOTE, "BOB-QUESTION-77"):
        assert secret not in page, secret
    store = open_store(seeded)
    try:
        kinds = store.fetchall(
            "SELECT actor, kind FROM activity WHERE kind IN ('question', 'answer') ORDER BY id"
        )
    finally:
        store.close()
    assert kinds == [("bob", "question"), ("alice", "question"), ("lena", "answer")]


def test_a_reviewer_cannot_open_the_questions_page(seeded):  # noqa: F811
    from conftest import run_app
    from test_roles import USERS

    app = run_app(USERS["reviewer"])
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        app.switch_page("pages/questions.py")


def test_on_the_label_page_a_skipped_claim_is_reopened_and_back_fills_in_the_verdict_given(
    seeded,  # noqa: F811 - the fixture imported above
):
    from conftest import button_for, open_panel, run_app
    from test_pages_labelling import _claim_text
    from test_roles import USERS

    app = run_app(USERS["reviewer"], "pages/label.py")
    skipped = _claim_text(app)
    button_for(app, "label_skip_").click().run()
    app.selectbox(key="label_error_type").select("number")
    app.text_area(key="label_note").input("the amount differs")
    labelled = _claim_text(app)
    button_for(app, "label_button_contradicted_").click().run()
    assert app.selectbox(key="label_error_type").value is None  # the same empty state
    assert app.text_area(key="label_note").value == ""
    app.button(key="label_back_button").click().run()
    assert _claim_text(app) == labelled
    assert "which was **contradicted**" in app.warning[0].value
    assert app.selectbox(key="label_error_type").value == "number"
    assert app.text_area(key="label_note").value == "the amount differs"
    assert button_for(app, "label_button_contradicted_").proto.type == "primary"
    reopen = open_panel(app, "label_revisit").selectbox(key="label_reopen_pick")
    assert reopen.options[0].startswith("skipped (unclear_context)")
    reopen.select(0).run()
    app.button(key="label_reopen").click().run()
    assert _claim_text(app) == skipped
    button_for(app, "label_button_supported_").click().run()
    assert not app.exception, app.exception
    store = open_store(seeded)
    try:
        assert skipped_claims(store, "alice", "demo") == []
    finally:
        store.close()
