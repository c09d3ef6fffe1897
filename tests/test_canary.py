"""Canary-trap suites: the rules change values and nothing else, values are found in their
formats, responses are scored, pass rates carry Wilson intervals, and a seed fixes the suite."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from annotate.canary.matching import has_value, read_response
from annotate.canary.rules import Rewriter, parse_rule
from annotate.canary.scoring import import_responses, outcome, score
from annotate.canary.suite import build_items, export_jsonl, make_suite
from annotate.errors import UsageError
from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import SampleSpec, parse_where
from annotate.sampling.samples import draw_sample, plan_sample, top_up

CONTEXT = (
    "Invoice INV-58389 (ticket Q-2041, plan v2) is at https://pay.example.com/i/58389?x=12 "
    "and /v1/payments/{id}/capture; mail billing42@example.com. Total due: £2,103.37. "
    "Due date: 20 January 2026. Unpaid 13 days after 2026-01-20, a fee of 4% applies; "
    "support 09:00-17:00. Since 2019 we serve 1,200 users with 10GB each, 30-day trial."
)


def rewrite(text: str, rule: str = "halve", days: int = 10, names: bool = False):
    return Rewriter(parse_rule(rule), days, random.Random(0), names).rewrite(text, 0)


def test_halve_changes_every_number_and_date_and_nothing_else():
    text, changes = rewrite(CONTEXT)
    assert text == (
        "Invoice INV-58389 (ticket Q-2041, plan v2) is at https://pay.example.com/i/58389?x=12 "
        "and /v1/payments/{id}/capture; mail billing42@example.com. Total due: £1,051.69. "
        "Due date: 30 January 2026. Unpaid 6.5 days after 2026-01-30, a fee of 2% applies; "
        "support 09:00-17:00. Since 2020 we serve 600 users with 5GB each, 15-day trial."
    )
    found = {(c.kind, c.original, c.fictive, c.unit, c.currency) for c in changes}
    assert found == {
        ("number", "2,103.37", "1,051.69", None, "£"),
        ("date", "20 January 2026", "30 January 2026", None, None),
        ("number", "13", "6.5", "day", None),
        ("date", "2026-01-20", "2026-01-30", None, None),
        ("number", "4", "2", "%", None),
        ("year", "2019", "2020", None, None),
        ("number", "1,200", "600", "user", None),
        ("number", "10", "5", "gb", None),
        ("number", "30", "15", None, None),
    }
    for change in changes:  # the offsets point at the fictive value in the new text
        assert text[change.start : change.end] == change.fictive


@pytest.mark.parametrize(
    ("rule", "before", "after"),
    [
        ("scale:1.5", "about 1,000 users and 3 admins", "about 1,500 users and 4.5 admins"),
        ("scale:3", "a fee of $19.99 per seat", "a fee of $59.97 per seat"),
        ("shift:7", "refunds take 5 days, 12 at most", "refunds take 12 days, 19 at most"),
        ("shift:-2", "3.5 hours", "1.5 hours"),
        ("halve", "€0.01 a call", "€0.005 a call"),  # rounding would give the old value back
    ],
)
def test_scale_and_shift_keep_the_format_of_each_number(rule, before, after):
    assert rewrite(before, rule)[0] == after


def test_names_change_only_with_swap_names_and_only_listed_first_names():
    text = "Ask Yuki Alvarez or Grace Mensah; Zorblat Quinn is not a listed name."
    assert rewrite(text)[0] == text
    swapped, changes = rewrite(text, names=True)
    assert "Yuki Alvarez" not in swapped and "Grace Mensah" not in swapped
    assert "Zorblat Quinn" in swapped
    assert [c.original for c in changes] == ["Yuki Alvarez", "Grace Mensah"]
    assert len({c.fictive for c in changes}) == 2


@pytest.mark.parametrize("rule", ["double", "scale:1", "scale:0", "scale:x", "shift:0", "halve:2"])
def test_a_bad_rule_is_a_usage_error_that_lists_the_rules(rule):
    with pytest.raises(UsageError, match="halve, scale:F"):
        parse_rule(rule)


THOUSAND = {
    "kind": "number",
    "original": "1,000",
    "fictive": "500",
    "unit": "user",
    "currency": None,
}


@pytest.mark.parametrize(
    "answer",
    [
        "We have 1,000 users.",
        "We have 1000 users.",
        "About 1k users.",
        "About 1.0K users.",
        "One thousand users.",
        "1 thousand users",
        "a total of 1000",  # no unit in the answer still counts
    ],
)
def test_a_number_is_found_in_each_of_its_formats(answer):
    assert has_value(read_response(answer), THOUSAND, "original")
    assert not has_value(read_response(answer), THOUSAND, "fictive")


@pytest.mark.parametrize(
    "answer",
    [
        "1000 seats",  # another unit
        "twenty one thousand users",  # part of a larger number
        "10,000 users",
        "order ORD-1000 ships",  # an id, not a value
        "see https://example.com/1000",
    ],
)
def test_a_number_in_another_unit_or_inside_something_else_is_not_found(answer):
    assert not has_value(read_response(answer), THOUSAND, "original")


def test_units_currencies_and_dates_are_matched_in_their_own_formats():
    days = {"kind": "number", "original": "13", "fictive": "6.5", "unit": "day", "currency": None}
    assert has_value(read_response("within thirteen days"), days, "original")
    assert not has_value(read_response("within 13 hours"), days, "original")
    assert has_value(read_response("6.5 days"), days, "fictive")
    money = {"kind": "number", "original": "2,103.37", "fictive": "1,051.69", "unit": None}
    money["currency"] = "£"
    assert has_value(read_response("£1051.69 is due"), money, "fictive")
    assert has_value(read_response("GBP 2,103.37"), money, "original")
    assert not has_value(read_response("$1,051.69"), money, "fictive")
    percent = {"kind": "number", "original": "4", "fictive": "2", "unit": "%", "currency": None}
    assert has_value(read_response("a 2 percent fee"), percent, "fictive")
    date = {"kind": "date", "original": "20 January 2026", "fictive": "1 March 2026"}
    for said in ("2026-03-01", "March 1, 2026", "1 Mar 2026"):
        assert has_value(read_response(f"due {said}."), date, "fictive"), said
    assert has_value(read_response("due Jan 20, 2026"), date, "original")


CHECKS = [
    {"kind": "number", "original": "1,000", "fictive": "500", "unit": "user", "currency": None},
    {"kind": "date", "original": "20 January 2026", "fictive": "1 March 2026"},
]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("There are five hundred users, due 2026-03-01.", "followed"),
        ("There are 500 users.", "followed"),
        ("There are 1k users, due on January 20, 2026.", "leak"),
        ("One thousand users.", "leak"),
        ("500 users now, 1,000 last year.", "both"),
        ("I cannot tell from the documents.", "neither"),
        ("There are 750 users.", "neither"),
    ],
)
def test_responses_are_scored_followed_leak_both_or_neither(answer, expected):
    assert outcome(CHECKS, answer) == expected


TRACES = [
    {
        "trace_id": f"c-{i}",
        "feature": "billing_qa",
        "request": "How long until the account is paused?",
        "response": f"Accounts are paused after {60 + i} days; the fee is {i + 2}%.",
        "context": [
            {"source": f"kb/{i}", "text": f"Accounts are paused after {60 + i} days."},
            {
                "source": None,
                "text": f"A fee of {i + 2}% applies from 3 March 2026 to Yuki Alvarez.",
            },
        ],
    }
    for i in range(6)
]


def test_the_same_seed_gives_the_same_suite_and_another_seed_another():
    first = build_items(TRACES, "s", "halve", True, seed=5)
    again = build_items(list(reversed(TRACES)), "s", "halve", True, seed=5)
    key = lambda items: sorted(json.dumps(i, sort_keys=True) for i in items[0])  # noqa: E731
    assert key(first) == key(again)
    other = build_items(TRACES, "s", "halve", True, seed=6)
    assert key(first) != key(other)


def test_questions_come_from_the_request_or_one_per_other_changed_value():
    items, skipped = build_items(TRACES[:1], "s", "halve", False, seed=1)
    assert skipped == 0
    by_kind = {i["question_kind"]: i for i in items}
    request = by_kind["request"]
    assert request["request"] == TRACES[0]["request"]
    assert {(c["original"], c["fictive"]) for c in request["checks"]} == {("60", "30"), ("2", "1")}
    generated = [i for i in items if i["question_kind"] == "generated"]
    assert [g["checks"][0]["original"] for g in generated] == ["3 March 2026"]
    assert "___" in generated[0]["request"] and "March" not in generated[0]["request"]


@pytest.fixture
def suite_store(fresh_store, tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    import_traces(fresh_store, path)
    draw_sample(fresh_store, SampleSpec(name="m", n=6, by=("feature",), seed=1))
    make_suite(fresh_store, "m", "s", "halve", seed=3, actor="lena")
    return fresh_store


def replay(tmp_path, store, name: str, answer, model: str):
    rows = [json.loads(line) for line in export_jsonl(store, "s").decode().splitlines()]
    path = tmp_path / f"{name}.jsonl"
    lines = [
        {
            "trace_id": f"{row['canary_id']}/{name}",
            "request": row["request"],
            "context": row["context"],
            "response": answer(row),
            "model": model,
            "attributes": {"canary_id": row["canary_id"]},
        }
        for row in rows
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, len(rows)


def test_pass_rates_carry_the_wilson_interval_of_statsmodels(suite_store, tmp_path):
    def half_right(row):  # the first half of the items answered from the context
        return "; ".join(row["expected"] if row["canary_id"] < "s-c-3" else row["original"])

    path, n = replay(tmp_path, suite_store, "mixed", half_right, "m-1")
    report, counts = import_responses(suite_store, "s", path, actor="lena")
    assert report.imported == n and counts["neither"] == 0
    (row,) = score(suite_store, "s", ["model"])["rows"]
    passes = counts["followed"]
    low, high = proportion_confint(passes, n, alpha=0.05, method="wilson")
    assert row["group"] == {"model": "m-1"} and row["n"] == n
    assert row["pass_rate"] == pytest.approx(passes / n)
    assert (row["low"], row["high"]) == (pytest.approx(low), pytest.approx(high))
    assert row["method"] == "Wilson"


def test_a_row_without_a_known_canary_id_is_rejected_by_line(suite_store, tmp_path):
    path, n = replay(tmp_path, suite_store, "ok", lambda row: "; ".join(row["expected"]), "m")
    good = path.read_text()
    bad = json.dumps({"trace_id": "x1", "response": "r", "context": ["c"]})
    unknown = json.dumps({"trace_id": "x2", "response": "r", "context": ["c"], "canary_id": "z"})
    path.write_text(bad + "\n" + good + unknown + "\n")
    report, counts = import_responses(suite_store, "s", path)
    assert [(e.line, e.field) for e in report.errors] == [
        (1, "attributes.canary_id"),
        (n + 2, "attributes.canary_id"),
    ]
    assert "is missing" in report.errors[0].message
    assert "'z' is not an item of suite 's'" in report.errors[1].message
    assert report.imported == n and counts["followed"] == n
    assert suite_store.scalar("SELECT count(*) FROM traces WHERE trace_id LIKE 'x%'") == 0


def test_neither_responses_are_labelled_blind_and_their_verdicts_feed_the_pass_rate(
    suite_store, tmp_path
):
    from annotate.accounts.users import add_user
    from annotate.labelling.assignment import assign
    from annotate.labelling.session import next_claim, record_verdict, set_min_dwell

    path, n = replay(tmp_path, suite_store, "vague", lambda row: "It depends on your plan.", "m")
    _, counts = import_responses(suite_store, "s", path)
    assert counts["neither"] == n
    with pytest.raises(UsageError, match="labelling queue of a canary suite"):
        top_up(suite_store, "canary:s", 1)
    (row,) = score(suite_store, "s")["rows"]
    assert (row["pending"], row["pass_rate"], row["method"]) == (
        n,
        None,
        "no decided responses yet",
    )
    add_user(suite_store, "rita", "reviewer", "a long passphrase")
    set_min_dwell(suite_store, 0)
    assign(suite_store, "canary:s", ["rita"], per_trace=1)
    labels = iter(["supported"] + ["contradicted"] * (n - 1))
    while (view := next_claim(suite_store, "rita", "canary:s")) is not None:
        assert view.claim["text"] == "It depends on your plan."
        record_verdict(suite_store, "rita", view, next(labels))
    (row,) = score(suite_store, "s")["rows"]
    assert (row["neither_supported"], row["neither_unsupported"], row["pending"]) == (1, n - 1, 0)
    assert row["pass_rate"] == pytest.approx(1 / n)


def test_make_suite_refuses_a_taken_name_and_an_unknown_sample(suite_store):
    with pytest.raises(UsageError, match="exists already"):
        make_suite(suite_store, "m", "s")
    with pytest.raises(UsageError, match="no sample named 'nope'"):
        make_suite(suite_store, "nope", "t")
    kinds = suite_store.fetchall("SELECT kind, actor FROM activity WHERE kind = 'canary'")
    assert kinds == [("canary", "lena")]


def test_decimal_rule_values_are_exact():
    assert parse_rule("scale:0.1").apply(Decimal("30")) == Decimal("3.0")


def test_replayed_responses_never_enter_a_sampling_frame(suite_store, tmp_path):
    path, n = replay(tmp_path, suite_store, "ok", lambda row: "; ".join(row["expected"]), "m")
    import_responses(suite_store, "s", path)
    assert suite_store.scalar("SELECT count(*) FROM traces") == len(TRACES) + n
    plan = draw_sample(suite_store, SampleSpec(name="all", n=len(TRACES), by=("feature",), seed=2))
    assert plan.frame_size == len(TRACES)
    assert sorted(plan.trace_ids) == sorted(t["trace_id"] for t in TRACES)


def test_replays_are_excluded_by_a_reason_of_their_own_not_as_filtered_out(suite_store, tmp_path):
    """Catches a new sample's plan counting every replay as `filtered_out` with no --where:
    the filters removed nothing; the replays never enter a frame."""
    path, n = replay(tmp_path, suite_store, "ok", lambda row: "; ".join(row["expected"]), "m")
    import_responses(suite_store, "s", path)
    plan = plan_sample(suite_store, SampleSpec(name="all", n=3, by=("feature",), seed=2))
    assert plan.excluded == {"no_context": 0, "filtered_out": 0, "canary_replay": n}
    where = SampleSpec(name="one", n=1, by=("feature",), seed=2, filters=parse_where(["model=x"]))
    suite_store.execute("UPDATE traces SET model = 'x' WHERE trace_id = 'c-0'")
    narrowed = plan_sample(suite_store, where)
    assert narrowed.frame_size == 1
    assert narrowed.excluded == {
        "no_context": 0,
        "filtered_out": len(TRACES) - 1,
        "canary_replay": n,
    }


def test_a_queue_without_responses_yet_is_a_sample_that_holds_no_traces(suite_store, tmp_path):
    from annotate.labelling.assignment import assign

    path, _ = replay(tmp_path, suite_store, "ok", lambda row: "; ".join(row["expected"]), "m")
    _, counts = import_responses(suite_store, "s", path)
    assert counts["neither"] == 0
    with pytest.raises(UsageError, match="^sample 'canary:s' holds no traces yet$"):
        assign(suite_store, "canary:s", ["rita"], per_trace=1)
    with pytest.raises(UsageError, match="the samples are 'canary:s', 'm' "):
        assign(suite_store, "canary:t", ["rita"], per_trace=1)


_PROTECTED = [
    "INV-58389",
    "v2",
    "https://example.com/a/12",
    "/v1/items/7",
    "a9@example.com",
    "09:30",
]
_tokens = st.one_of(
    st.sampled_from(_PROTECTED),
    st.sampled_from(["fee", "days", "users", "the", "GB", "%", "(", ")", ";"]),
    st.integers(1, 99_999).map(str),
    st.integers(1, 9_999_999).map(lambda v: f"{v:,}"),
    st.decimals("0.01", "999", places=2).map(str),
)


@given(st.lists(_tokens, min_size=1, max_size=30))
def test_a_rewrite_changes_each_nonzero_number_and_leaves_every_other_character(tokens):
    text = " ".join(tokens)
    new, changes = rewrite(text, "scale:3")
    numbers = [t for t in tokens if t[0].isdigit() and ":" not in t]
    assert len(changes) == len(numbers)
    rebuilt, cursor = [], 0
    for change in changes:  # putting the originals back gives the text we started from
        rebuilt += [new[cursor : change.start], change.original]
        cursor = change.end
    assert "".join(rebuilt) + new[cursor:] == text
    for token in _PROTECTED:
        assert new.count(token) >= text.count(token)
