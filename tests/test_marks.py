"""Evidence marks: the claim's numbers, amounts, dates, ids and names, whether the context has
each, and the passages that share most with the claim (annotate.labelling.marks)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from annotate.labelling.marks import best_passages, claim_details, missing_details

CONTEXT = [
    "Invoice INV-1003 was issued on 2026-02-04 for $1,243.00. Payment is due in 30 days.",
    "Refunds are processed within five business days by Acme Billing. "
    "Returns are free until March 3, 2026.",
]


def kinds(claim: str) -> dict[str, str]:
    return {d.text: d.kind for d in claim_details(claim, CONTEXT)}


def test_a_capitalised_word_opening_a_sentence_is_not_a_name():
    assert kinds("Returns are free.") == {}
    assert kinds("Refunds take 5 days. Returns go to Acme Billing.") == {
        "5": "number",
        "Acme Billing": "name",
    }


def test_numbers_amounts_dates_and_ids_are_found_by_value_not_by_spelling():
    details = claim_details(
        "INV-1003 of 1243 dollars was issued on February 4, 2026, refunds take 5 days.", CONTEXT
    )
    found = {d.text: d.in_context for d in details}
    assert found == {
        "INV-1003": True,
        "1243 dollars": True,  # $1,243.00 in the context
        "February 4, 2026": True,  # 2026-02-04
        "5": True,  # "five business days"
    }
    kind = {d.text: d.kind for d in details}
    assert kind["February 4, 2026"] == "date" and kind["1243 dollars"] == "amount"


def test_a_number_the_context_does_not_have_stands_out():
    details = claim_details("The invoice of $1,234.00 is due in 30 days.", CONTEXT)
    assert [d.text for d in missing_details(details)] == ["$1,234.00"]
    assert [d.text for d in details if d.in_context] == ["30"]


def test_a_date_on_another_day_or_year_is_missing():
    assert missing_details(claim_details("Returns are free until 4 March 2026.", CONTEXT))
    assert missing_details(claim_details("Returns are free until March 3, 2027.", CONTEXT))
    assert not missing_details(claim_details("Returns are free until 3rd March.", CONTEXT))


def test_where_a_detail_occurs_is_its_exact_span_in_the_context():
    (detail,) = claim_details("It is issued by Acme Billing.", CONTEXT)
    ((item, start, end),) = detail.found
    assert CONTEXT[item][start:end] == "Acme Billing"


def test_a_number_inside_a_date_is_not_a_number_of_its_own():
    assert kinds("Issued on 2026-02-04.") == {"2026-02-04": "date"}


def test_the_best_passage_is_the_sentence_sharing_most_with_the_claim():
    claim = "Acme Billing processes refunds within five business days."
    passages = best_passages(claim, CONTEXT)
    item, start, end, share = passages[0]
    assert CONTEXT[item][start:end] == (
        "Refunds are processed within five business days by Acme Billing."
    )
    assert share == round(6 / 7, 3)  # "processes" is not "processed"
    assert len(passages) <= 2 and all(p[3] <= share for p in passages)


def test_a_decimal_point_does_not_end_a_passage():
    item, start, end, _ = best_passages("The invoice was issued for $1,243.00.", CONTEXT)[0]
    assert CONTEXT[item][start:end].endswith("$1,243.00.")


def test_a_claim_with_nothing_in_common_has_no_passage():
    assert best_passages("Hello there!", CONTEXT) == []


@given(st.text(max_size=200), st.lists(st.text(max_size=200), max_size=3))
def test_every_span_is_inside_its_text(claim, contexts):
    for detail in claim_details(claim, contexts):
        assert claim[detail.start : detail.end] == detail.text
        for item, start, end in detail.found:
            assert 0 <= start < end <= len(contexts[item])
    for item, start, end, share in best_passages(claim, contexts):
        assert 0 <= start < end <= len(contexts[item]) and 0 < share <= 1


def test_the_label_page_marks_an_amount_the_context_lacks(tmp_path, monkeypatch):
    from conftest import button_for, run_app
    from labelling_data import prepare

    from annotate.accounts.users import User
    from annotate.labelling.assignment import assign
    from annotate.labelling.session import set_min_dwell
    from annotate.store import open_store

    path = tmp_path / "marks.duckdb"
    store = open_store(path)
    prepare(store, tmp_path)
    store.execute("UPDATE contexts SET text = replace(text, '.00', '.50')")  # $40.00 -> $40.50
    assign(store, "demo", ["alice"], per_trace=1, seed=1)
    set_min_dwell(store, 0)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    app = run_app(User("alice", "reviewer"), "pages/label.py")
    for _ in range(3):
        claim = next(h.proto.body for h in app.get("html") if "annotate-claim" in h.proto.body)
        if "amount due" in claim:
            break
        button_for(app, "label_button_supported_").click().run()
    assert '<mark class="annotate-missing"' in claim and ".00</mark>" in claim
    assert "(amount) not in the context</b>" in claim  # the details line, in the claim's element
    contexts = " ".join(h.proto.body for h in app.get("html") if "annotate-context" in h.proto.body)
    assert "annotate-passage" in contexts  # the invoice sentence shares most with the claim
