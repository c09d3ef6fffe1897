"""Stratified sampling: allocation invariants, the seeded draw, top-ups, errors, the CLI contract."""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2

from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import (
    SampleError,
    SampleSpec,
    allocate,
    explicit_sizes,
    neyman_weight,
    parse_sizes,
    parse_where,
)
from annotate.sampling.samples import (
    draw_sample,
    list_samples,
    plan_sample,
    sample_trace_ids,
    sample_units,
    top_up,
)
from annotate.store import open_store
from annotate.store.samples import draw_ranks

FEATURES = {"billing_qa": 0.30, "hr_policy": 0.05, "medical_info": 0.20, "code_assistant": 0.10}


def write_traces(path: Path, count: int = 1200) -> Path:
    rng = random.Random(11)
    with path.open("w") as fh:
        for i in range(count):
            feature = rng.choice(list(FEATURES))
            risk = "high" if rng.random() < 0.2 else "low"
            flagged = rng.random() < FEATURES[feature]
            row = {
                "trace_id": f"tr-{i:05d}",
                "timestamp": f"2026-03-{1 + i % 28:02d}T10:00:00Z",
                "feature": feature,
                "risk_category": risk,
                "model": rng.choice(["m-1", "m-2"]),
                "response": "r",
                "context": [] if i % 40 == 0 else ["doc"],
                "attributes": {"retriever": rng.choice(["bm25", "hybrid"]), "empty": None},
            }
            if feature != "hr_policy":  # hr_policy has no judge verdicts: Neyman falls back to 0.5
                row["judge"] = [
                    {
                        "judge": "j",
                        "level": "response",
                        "label": "unsupported" if flagged else "supported",
                    }
                ]
            fh.write(json.dumps(row) + "\n")
    return path


@pytest.fixture(scope="module")
def frame_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sampling")
    store = open_store(folder / "s.duckdb")
    import_traces(store, write_traces(folder / "traces.jsonl"))
    yield store
    store.close()


# -- allocation ---------------------------------------------------------------------------


@st.composite
def allocation_cases(draw):
    populations = draw(st.lists(st.integers(1, 400), min_size=1, max_size=60))
    weights = draw(
        st.lists(st.floats(0, 1000), min_size=len(populations), max_size=len(populations))
    )
    minimum = draw(st.integers(0, 6))
    lower = sum(min(max(minimum, 1), p) for p in populations)
    n = draw(st.integers(lower, sum(populations)))
    return populations, weights, minimum, n


@given(allocation_cases())
@settings(max_examples=300, deadline=None)
def test_allocation_sums_to_n_within_bounds_and_minimum(case):
    populations, weights, minimum, n = case
    sizes = allocate(n, populations, weights, minimum)
    assert sum(sizes) == n
    for size, population in zip(sizes, populations, strict=True):
        assert 0 < size <= population
        assert size >= min(minimum, population)


@given(allocation_cases(), st.data())
@settings(max_examples=150, deadline=None)
def test_allocation_above_a_floor_never_goes_below_it(case, data):
    populations, weights, minimum, n = case
    first = allocate(n, populations, weights, minimum)
    extra = data.draw(st.integers(0, sum(populations) - n))
    grown = allocate(n + extra, populations, weights, minimum, floor=first)
    assert sum(grown) == n + extra
    assert all(g >= f for g, f in zip(grown, first, strict=True))


def test_neyman_matches_a_hand_computed_example():
    # N_h S_h with S_h = sqrt(p(1-p)): 1000*0.3 = 300, 500*sqrt(0.21) = 229.13, 200*0.5 = 100.
    # n = 100 shares them as 47.68, 36.42, 15.89 -> floors 47, 36, 15 (98); the two
    # largest remainders (.89, .68) get the last two -> 48, 36, 16.
    populations = [1000, 500, 200]
    weights = [neyman_weight(N, p) for N, p in zip(populations, [0.1, 0.3, 0.5], strict=True)]
    assert weights[0] == pytest.approx(300.0)
    assert weights[1] == pytest.approx(229.1288, abs=1e-4)
    assert allocate(100, populations, weights, minimum=1) == [48, 36, 16]


def test_neyman_without_judge_verdicts_uses_half_as_the_rate():
    assert neyman_weight(400, None) == 200.0


def test_proportional_allocation_respects_the_cap_and_the_minimum():
    assert allocate(10, [5, 100, 100], [5, 100, 100], minimum=3) == [3, 4, 3]
    assert allocate(30, [2, 100, 100], [100, 1, 10], minimum=1) == [2, 3, 25]


# -- plan and draw ------------------------------------------------------------------------


def test_plan_reports_each_stratum_with_its_inclusion_probability(frame_store):
    plan = plan_sample(
        frame_store, SampleSpec(name="p", n=120, allocation="neyman", min_per_stratum=5, seed=1)
    )
    assert plan.total == 120
    assert plan.excluded == {"no_context": 30, "filtered_out": 0, "canary_replay": 0}
    assert plan.frame_size == 1170
    for stratum in plan.strata:
        assert 5 <= stratum.sample <= stratum.population
        assert stratum.inclusion_probability == stratum.sample / stratum.population
    hr = [s for s in plan.strata if s.values[0] == "hr_policy"]
    assert all(s.judge_rate is None for s in hr)


def test_a_drawn_sample_stores_stratum_probability_and_weight(frame_store):
    plan = draw_sample(frame_store, SampleSpec(name="stored", n=100, seed=3))
    units = sample_units(frame_store, "stored")
    assert len(units) == 100 == len(set(u["trace_id"] for u in units))
    sizes = {json.dumps(list(s.values)): s for s in plan.strata}
    for unit in units:
        stratum = sizes[unit["stratum_key"]]
        assert unit["inclusion_probability"] == pytest.approx(stratum.sample / stratum.population)
        assert unit["weight"] == pytest.approx(stratum.population / stratum.sample)
    assert sorted(plan.trace_ids) == sorted(u["trace_id"] for u in units)


def test_the_draw_follows_the_documented_hash_order(frame_store):
    plan = draw_sample(frame_store, SampleSpec(name="hash", n=40, by=("feature",), seed=99))
    traces = frame_store.fetchall("SELECT trace_id, feature FROM traces WHERE judgeable")
    expected = []
    for stratum in plan.strata:
        members = sorted(
            (hashlib.sha256(f"99:{tid}".encode()).hexdigest(), tid)
            for tid, f in traces
            if f == stratum.values[0]
        )
        expected += [tid for _, tid in members[: stratum.sample]]
    assert sorted(plan.trace_ids) == sorted(expected)


@given(st.integers(0, 2**31), st.integers(0, 2**31))
@settings(max_examples=15, deadline=None)
def test_same_seed_same_sample_and_another_seed_another(frame_store, seed, other):
    spec = SampleSpec(name="x", n=60, seed=seed)
    first = [r[0] for r in _ranks(frame_store, spec)]
    assert first == [r[0] for r in _ranks(frame_store, spec)]
    if other != seed:
        assert first != [r[0] for r in _ranks(frame_store, SampleSpec(name="x", n=60, seed=other))]


def _ranks(store, spec):
    plan = plan_sample(store, spec)
    ranges = [(s.values, 0, s.sample) for s in plan.strata]
    return draw_ranks(store, spec.filters, spec.by, plan.max_import_id, spec.seed, ranges)


def test_top_ups_are_disjoint_and_update_the_weights(frame_store):
    first = draw_sample(frame_store, SampleSpec(name="grow", n=80, allocation="neyman", seed=5))
    more = top_up(frame_store, "grow", 50)
    again = top_up(frame_store, "grow", 25)
    assert not set(first.trace_ids) & set(more.trace_ids)
    assert not (set(first.trace_ids) | set(more.trace_ids)) & set(again.trace_ids)
    assert len(sample_trace_ids(frame_store, "grow")) == 155 == again.total
    sizes = {json.dumps(list(s.values)): s for s in again.strata}
    for unit in sample_units(frame_store, "grow"):
        stratum = sizes[unit["stratum_key"]]
        assert unit["weight"] == pytest.approx(stratum.population / stratum.sample)
    # a top-up takes the next traces in hash order: the union is what one draw of that size takes
    union = set(sample_trace_ids(frame_store, "grow"))
    ranges = [(s.values, 0, s.sample) for s in again.strata]
    assert union == {
        r[0]
        for r in draw_ranks(
            frame_store, again.spec.filters, again.spec.by, again.max_import_id, 5, ranges
        )
    }


def test_filters_narrow_the_frame_and_are_stored(frame_store):
    where = parse_where(
        [
            "feature=billing_qa,medical_info",
            "retriever=bm25",
            "since=2026-03-10",
            "judge=unsupported",
        ]
    )
    plan = draw_sample(
        frame_store, SampleSpec(name="narrow", n=10, by=("feature",), seed=2, filters=where)
    )
    rows = frame_store.fetchall(
        "SELECT t.feature, json_extract_string(t.attributes, '$.retriever'), t.timestamp FROM traces t "
        "JOIN sample_units u USING (trace_id) WHERE u.sample = 'narrow'"
    )
    assert len(rows) == 10
    assert all(
        f in ("billing_qa", "medical_info") and r == "bm25" and ts.day >= 10 for f, r, ts in rows
    )
    stored = [s for s in list_samples(frame_store) if s["name"] == "narrow"][0]
    assert stored["filters"]["columns"] == {"feature": ["billing_qa", "medical_info"]}
    assert stored["excluded"]["filtered_out"] == 1170 - plan.frame_size
    assert stored["seed"] == 2 and stored["by_columns"] == ["feature"]


def test_strata_may_be_attributes(frame_store):
    plan = plan_sample(frame_store, SampleSpec(name="a", n=20, by=("retriever", "model"), seed=1))
    assert sorted(s.values for s in plan.strata) == [
        ("bm25", "m-1"),
        ("bm25", "m-2"),
        ("hybrid", "m-1"),
        ("hybrid", "m-2"),
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            SampleSpec(name="e", n=10, by=("colour",)),
            "unknown column or attribute 'colour'; use one of: feature, risk_category, model",
        ),
        (
            SampleSpec(name="e", n=5000),
            "n=5000 is larger than the frame (1170 judgeable traces match); lower --n or widen the filters",
        ),
        (
            SampleSpec(name="e", n=10, by=("empty",)),
            "stratum column 'empty' has no values in the frame; stratify by another column",
        ),
        (
            SampleSpec(name="e", n=10, filters=parse_where(["model=m-9"])),
            "the frame is empty: none of the 1170 judgeable traces (of 1200) match the filters",
        ),
        (
            SampleSpec(name="e", n=3, min_per_stratum=2),
            "n=3 cannot give each of the 8 strata its minimum (16 traces in all)",
        ),
    ],
)
def test_bad_sample_requests_say_what_to_change_and_store_nothing(frame_store, spec, message):
    before = len(list_samples(frame_store))
    with pytest.raises(SampleError) as caught:
        draw_sample(frame_store, spec)
    assert message in str(caught.value)
    assert len(list_samples(frame_store)) == before


def test_a_name_is_used_once(frame_store):
    draw_sample(frame_store, SampleSpec(name="once", n=10, seed=1))
    with pytest.raises(SampleError, match="a sample named 'once' exists"):
        draw_sample(frame_store, SampleSpec(name="once", n=10, seed=1))


# -- the statistical check ------------------------------------------------------------------


def test_selection_frequency_matches_inclusion_probability(tmp_path):
    """Over 1,500 seeds each trace is drawn about R * n_h / N_h times (chi-square, alpha 0.001).

    The seeds are fixed, so the outcome is the same on every run: not flaky.
    """
    store = open_store(tmp_path / "chi.duckdb")
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "trace_id": f"c{i}",
                    "feature": "a" if i < 12 else "b",
                    "response": "r",
                    "context": ["d"],
                }
            )
            + "\n"
            for i in range(40)
        )
    )
    import_traces(store, path)
    spec = SampleSpec(name="chi", n=10, by=("feature",), allocation="equal")
    plan = plan_sample(store, spec)
    assert [(s.population, s.sample) for s in plan.strata] == [(12, 5), (28, 5)]
    repetitions = 1500
    counts: Counter[str] = Counter()
    for seed in range(repetitions):
        ranges = [(s.values, 0, s.sample) for s in plan.strata]
        counts.update(
            r[0] for r in draw_ranks(store, spec.filters, spec.by, plan.max_import_id, seed, ranges)
        )
    for stratum in plan.strata:
        members = [f"c{i}" for i in range(40) if (i < 12) == (stratum.values[0] == "a")]
        expected = repetitions * stratum.inclusion_probability
        statistic = sum((counts[m] - expected) ** 2 / expected for m in members)
        # Each draw takes n_h of N_h without replacement: Var(O_i) = R pi (1 - pi) and
        # Cov(O_i, O_j) = -R pi (1 - pi) / (N - 1), so sum (O - E)^2 / (R pi (1 - pi)) is
        # N / (N - 1) times a chi-square with N - 1 degrees of freedom.
        size = len(members)
        scaled = statistic / (1 - stratum.inclusion_probability) * (size - 1) / size
        assert scaled < chi2.ppf(0.999, df=len(members) - 1), (stratum.values, scaled)
        assert math.isclose(sum(counts[m] for m in members), repetitions * stratum.sample)
    store.close()


# -- CLI ------------------------------------------------------------------------------------


def test_cli_sample_json_contract_plan_draw_and_top_up(cli, tmp_path):
    cli("import", str(write_traces(tmp_path / "traces.jsonl")))
    plan = cli(
        "sample",
        "--name",
        "s",
        "--n",
        "50",
        "--by",
        "feature,risk_category",
        "--allocation",
        "neyman",
        "--min-per-stratum",
        "2",
        "--seed",
        "7",
        "--plan-only",
        "--json",
    )
    assert plan.code == 0
    document = plan.json()
    assert set(document) == {"name", "seed", "frame_size", "excluded", "strata", "trace_ids"}
    assert (document["name"], document["seed"], document["frame_size"], document["trace_ids"]) == (
        "s",
        7,
        1170,
        [],
    )
    assert document["excluded"] == {"no_context": 30, "filtered_out": 0, "canary_replay": 0}
    first = document["strata"][0]
    assert set(first) == {"stratum", "population", "sample", "inclusion_probability"}
    assert set(first["stratum"]) == {"feature", "risk_category"}
    assert sum(s["sample"] for s in document["strata"]) == 50
    assert cli("samples", "--json").json() == {"samples": []}  # plan-only stored nothing

    drawn = cli(
        "sample",
        "--name",
        "s",
        "--n",
        "50",
        "--allocation",
        "neyman",
        "--min-per-stratum",
        "2",
        "--seed",
        "7",
        "--json",
    ).json()
    assert drawn["strata"] == document["strata"] and len(drawn["trace_ids"]) == 50
    planned = cli("sample", "--name", "s", "--top-up", "20", "--plan-only", "--json")
    assert "plan only, nothing stored" in planned.err
    more = cli("sample", "--name", "s", "--top-up", "20", "--json").json()
    assert len(more["trace_ids"]) == 20 and not set(more["trace_ids"]) & set(drawn["trace_ids"])
    assert sum(s["sample"] for s in more["strata"]) == 70
    assert planned.json() == more  # the plan shown is the top-up then stored, and only once
    listed = cli("samples", "--json").json()["samples"]
    assert [(s["name"], s["drawn"], s["draws"]) for s in listed] == [("s", 70, 2)]


def test_cli_sample_errors_exit_2(cli, tmp_path):
    cli("import", str(write_traces(tmp_path / "traces.jsonl")))
    result = cli("sample", "--name", "s", "--n", "10", "--by", "colour")
    assert result.code == 2 and "unknown column or attribute 'colour'" in result.err
    assert cli("sample", "--name", "s", "--top-up", "5").code == 2
    assert cli("sample", "--name", "s", "--n", "10", "--where", "feature").code == 2


def test_an_unknown_sample_is_a_usage_error_naming_the_samples_there_are(cli, db_path, tmp_path):
    """Catches a typo in --sample answered with "`annotate samples` lists them" (another
    command to run) or "draw one first" when there are samples: every command that takes a
    sample names the first ten there are, sorted, and how many more."""
    store = open_store(db_path)
    import_traces(store, write_traces(tmp_path / "traces.jsonl", 200))
    store.close()
    commands = [
        ("agreement", "--sample", "nosuch"),
        ("calibration", "--judge", "j", "--sample", "nosuch"),
        ("rates", "--sample", "nosuch"),
        ("gate", "--sample", "nosuch", "--max-rate", "0.1"),
        ("bundle", "--sample", "nosuch", "--out", str(tmp_path / "bundle.zip")),
        ("assign", "--sample", "nosuch", "--reviewers", "rita"),
        ("claims", "--sample", "nosuch"),
        ("canary", "make", "--sample", "nosuch", "--name", "z", "--out", str(tmp_path / "z")),
        ("sample", "--name", "nosuch", "--top-up", "1"),
        ("judge", "--sample", "nosuch", "--baseline"),
        ("sample", "show", "nosuch"),
    ]
    none = "no sample named 'nosuch': there are no samples yet; draw one with `annotate sample`"
    for args in commands:
        result = cli(*args)
        assert (result.code, result.err.strip()) == (2, f"error: {none}"), args
    store = open_store(db_path)
    for index in reversed(range(12)):  # drawn last to first: the message sorts them
        draw_sample(store, SampleSpec(name=f"s{index:02d}", n=4, by=("feature",), seed=index))
    store.close()
    names = ", ".join(f"'s{index:02d}'" for index in range(10))
    some = f"no sample named 'nosuch'; the samples are {names} and 2 more (`annotate samples`"
    for args in commands:
        result = cli(*args)
        assert result.code == 2 and some in result.err, (args, result.err)


def test_a_top_up_draws_from_the_frame_as_drawn_not_from_later_imports(tmp_path):
    """Catches: top-ups ignoring the frame as drawn (`import_id <= ?` removed from the draw)."""
    store = open_store(tmp_path / "later.duckdb")
    try:
        import_traces(store, write_traces(tmp_path / "first.jsonl"))
        draw_sample(store, SampleSpec(name="pinned", n=40, by=("feature",), seed=3))
        frame = {row[0] for row in store.fetchall("SELECT trace_id FROM traces")}
        later = tmp_path / "later.jsonl"
        rows = [
            {
                "trace_id": f"late-{i:04d}",
                "feature": "billing_qa",
                "response": "r",
                "context": ["d"],
            }
            for i in range(400)
        ]
        later.write_text("".join(json.dumps(row) + "\n" for row in rows))
        import_traces(store, later)
        more = top_up(store, "pinned", 60)
        assert set(more.trace_ids) <= frame
        assert set(sample_trace_ids(store, "pinned")) <= frame
    finally:
        store.close()


def test_explicit_sizes_draw_exactly_the_sizes_asked_for(cli, tmp_path):
    """`--allocation explicit --sizes`: each named stratum gets its size; no other is drawn."""
    path = write_traces(tmp_path / "traces.jsonl")
    assert cli("import", str(path)).code == 0
    sizes = {"billing_qa": 7, "medical_info": 3, "code_assistant": 0, "hr_policy": 0}
    result = cli(
        "sample", "--name", "exact", "--by", "feature", "--allocation", "explicit",
        "--sizes", json.dumps(sizes), "--seed", "2", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    store = open_store(tmp_path / "annotate.duckdb")
    try:
        features = store.fetchall(
            "SELECT t.feature, count(*) FROM sample_units u JOIN traces t USING (trace_id) "
            "WHERE u.sample = 'exact' GROUP BY 1 ORDER BY 1"
        )
    finally:
        store.close()
    assert features == [("billing_qa", 7), ("medical_info", 3)]
    bad = cli("sample", "--name", "x", "--allocation", "explicit", "--by", "feature")
    assert bad.code == 2 and "--allocation explicit needs --sizes" in bad.err


def test_an_abstaining_judge_does_not_make_a_stratum_look_risky(tmp_path):
    """Neyman's judge rate uses the stored label mapping: `unknown` is no verdict, not a flag."""
    store = open_store(tmp_path / "abstain.duckdb")
    try:
        rows = [
            {"trace_id": f"u-{i}", "feature": "a" if i < 10 else "b", "response": "r",
             "context": ["c"], "judge": [{"judge": "j", "level": "response",
             "label": "unknown" if i < 10 else ("unsupported" if i % 2 else "supported")}]}
            for i in range(20)
        ]  # fmt: skip
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        import_traces(store, path)
        plan = plan_sample(store, SampleSpec(name="n", n=6, by=("feature",), allocation="neyman"))
        rates = {s.values: s.judge_rate for s in plan.strata}
        assert rates == {("a",): None, ("b",): 0.5}
    finally:
        store.close()


# Found by mutation testing (tests/MUTATION.md): the parsers and the explicit sizes' checks.
def test_where_clauses_parse_into_columns_attributes_times_and_judge() -> None:
    """Catches a clause sent to the wrong filter, a value list not split or not stripped."""
    where = parse_where(
        [
            " feature = billing_qa, hr_policy ,",
            "attr.chunking=1000-200",
            "tenant=acme",
            "judge=unsupported,not_in_context",
            "since=2026-03-01",
            "until=2026-03-31T12:30",
        ]
    )
    assert where.columns == {"feature": ("billing_qa", "hr_policy")}
    assert where.attributes == {"chunking": ("1000-200",), "tenant": ("acme",)}
    assert where.judge == ("unsupported", "not_in_context")
    assert (where.since, where.until) == (datetime(2026, 3, 1), datetime(2026, 3, 31, 12, 30))
    for bad in ("feature", "=billing_qa", "feature=", " = "):
        with pytest.raises(SampleError, match="must look like NAME=VALUE"):
            parse_where([bad])
    with pytest.raises(SampleError, match=r"since='March 1' must be an ISO date"):
        parse_where(["since=March 1"])


def test_a_time_with_an_offset_is_converted_to_utc_not_to_the_machine_zone(monkeypatch) -> None:
    """Trace times are naive UTC: `since=...+02:00` must not depend on the machine's zone."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        where = parse_where(["since=2026-03-01T00:00:00+02:00", "until=2026-03-02T01:00Z"])
        naive = parse_where(["since=2026-03-01T00:00:00"])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert where.since == datetime(2026, 2, 28, 22, 0)
    assert where.until == datetime(2026, 3, 2, 1, 0)
    assert naive.since == datetime(2026, 3, 1)  # no offset: already UTC, as stored


def test_explicit_sizes_name_every_stratum_and_fit_it() -> None:
    """Catches an unknown or missing stratum passing silently, and an off-by-one at the cap."""
    keys = [("billing_qa", "financial"), ("hr_policy", None)]
    sizes = parse_sizes({"billing_qa|financial": 20, "hr_policy|(none)": 5})
    assert sizes == {("billing_qa", "financial"): 20, ("hr_policy", None): 5}
    assert explicit_sizes(keys, [20, 9], sizes) == [20, 5]  # a whole stratum may be taken
    with pytest.raises(SampleError) as unknown:
        explicit_sizes(keys, [20, 9], {**sizes, ("legal", "x"): 1})
    assert str(unknown.value) == (
        "no stratum legal|x in the frame; strata are: billing_qa|financial, hr_policy|(none)"
    )
    with pytest.raises(SampleError) as missing:
        explicit_sizes(keys + [("legal", "x")], [20, 9, 4], {("billing_qa", "financial"): 3})
    assert str(missing.value) == (
        "give a size for every stratum (0 leaves one out); missing: hr_policy|(none), legal|x"
    )
    with pytest.raises(SampleError) as too_big:
        explicit_sizes(keys, [19, 9], sizes)
    assert str(too_big.value) == (
        "stratum billing_qa|financial has 19 traces; its size must be 0..19, got 20"
    )
    with pytest.raises(SampleError, match="must be 0..9, got -1"):
        explicit_sizes(keys, [20, 9], {**sizes, ("hr_policy", None): -1})


def test_a_where_value_may_hold_an_equals_sign_and_an_open_end_stays_open():
    """Catches the clause split at its last '=' (an attribute value such as `a=b` cut), and a
    missing bound read as something other than no bound."""
    from annotate.sampling.allocation import parse_where

    filters = parse_where(["attr.prompt=v=2,v=3", "until=2026-03-01"])
    assert filters.attributes == {"prompt": ("v=2", "v=3")}
    assert filters.since is None and filters.until is not None


# Found by mutation testing of annotate/sampling/allocation.py: weights, zero-weight strata,
# the breakpoint search, rounding, and the degenerate and mismatched inputs.
def test_neyman_weights_use_each_stratums_own_judge_rate() -> None:
    """Catches the judge rate ignored (every stratum weighted as if p = 0.5), and an unknown
    allocation or mismatched populations/rates passing without the documented error."""
    from annotate.sampling.allocation import allocation_weights

    # N_h * sqrt(p(1-p)): 100 * 0.5, 200 * sqrt(0.09) = 60, 50 * 0.5 (no verdict)
    weights = allocation_weights("neyman", [100, 200, 50], [0.5, 0.1, None])
    assert weights == pytest.approx([50.0, 60.0, 25.0])
    with pytest.raises(ValueError):
        allocation_weights("neyman", [100, 200], [0.5])
    with pytest.raises(SampleError) as unknown:
        allocation_weights("optimal", [1], [None])
    assert str(unknown.value) == (
        "unknown allocation 'optimal'; use one of: proportional, equal, neyman, explicit"
    )


def test_zero_weight_strata_stay_at_their_minimum_until_the_weighted_ones_are_full() -> None:
    """Catches zero-weight strata (Neyman with a judge rate of 0 or 1) given a share, the
    weighted strata's capacity misjudged, and the rest not shared in proportion to size."""
    # weight 0 stays at the minimum 1; the weighted stratum takes the other 49
    assert allocate(50, [100, 100], [100.0, 0.0]) == [49, 1]
    # weighted capacity 10 + 10, zero-weight minimum 3: n = 22 <= 23, so the zero-weight
    # stratum stays at 3; lambda * (1, 2) clipped to 10 sums to 19 at lambda = 9 -> 9, 10
    assert allocate(22, [10, 10, 10], [1.0, 2.0, 0.0], minimum=3) == [9, 10, 3]
    # weighted stratum full (10); the zero-weight strata share the other 20 as 10:40 with
    # minimum 8: 20 * 10/50 = 4 -> raised to 8, the 40-stratum takes the remaining 12
    assert allocate(30, [10, 10, 40], [1.0, 0.0, 0.0], minimum=8) == [10, 8, 12]
    # no minimum in the way: 20 shared as 10:30 -> 5, 15
    assert allocate(25, [5, 10, 30], [1.0, 0.0, 0.0]) == [5, 5, 15]


def test_only_relative_weights_matter_and_tiny_ones_count_as_zero() -> None:
    """Catches weights not normalised by the largest (tiny or huge weights under- or
    overflowing) and the documented rule that a weight under 1e-12 of the largest is zero."""
    for scale in (1.0, 1e-300, 1e300):
        # weights 1:3 of n = 10 -> 2.5, 7.5; the tie in remainders goes to the earlier stratum
        assert allocate(10, [100, 100], [1 * scale, 3 * scale]) == [3, 7]
        # the second stratum has weight 0: it stays at the minimum 3
        assert allocate(7, [19, 28], [5 * scale, 0.0], minimum=3) == [4, 3]
    # 1e-7 and 3e-7 are under 1e-12 of 1e6: both count as zero, so once the first stratum is
    # full they share the other 10 by size (10:10 -> 5, 5), not by weight (1:3)
    assert allocate(20, [10, 10, 10], [1e6, 1e-7, 3e-7]) == [10, 5, 5]


def test_the_search_lands_on_n_at_and_just_after_a_breakpoint() -> None:
    """Catches the search passing a breakpoint where the clipped shares already sum to n, and
    (a real bug, fixed) a stratum lost from the slope to rounding (3 / w * w < 3), after which
    the overshoot was trimmed from the wrong stratum: n = 48 gave [25, 3, 12, 8]."""
    weights = [0.039057088571017085, 0.0, 4.0, 0.6797561012955662]
    # relative weights 0.0098, 0, 1, 0.17: stratum 2 is full (12) from lambda = 12, stratum 3
    # (29) from lambda = 170.6; stratum 0 leaves its minimum 3 only at lambda = 307, so
    # n = 47 is 3 + 3 + 12 + 29, and each trace more goes to stratum 0 (up to its 25)
    for n in (47, 48, 50, 69):
        assert allocate(n, [25, 23, 12, 29], weights, minimum=3) == [n - 44, 3, 12, 29]
    # the same bug elsewhere: once the heaviest stratum is full, the next one takes the rest
    # (relative weights 0.6, 0, 1: stratum 2 full at 23, stratum 0 takes 41 - 23 - 2 = 16)
    assert allocate(41, [25, 23, 23], [9.0, 0.0, 15.0], minimum=2) == [16, 2, 23]
    assert allocate(43, [29, 17], [0.3817673523445839, 5.0], minimum=5) == [26, 17]
    assert allocate(38, [19, 19, 16], [0.8424040637069136, 19.0, 0.0], minimum=4) == [15, 19, 4]


def test_the_slope_counts_only_strata_between_their_bounds() -> None:
    """Catches a stratum still held at its minimum counted in the slope of the search."""
    # relative weights 1/3, 1, 0, 0 with minimum 5: the zero-weight strata keep 5 each, so
    # s0 + s1 = 20; at lambda = 15, s1 = 15 and s0 = max(15/3, 5) = 5
    assert allocate(30, [8, 24, 26, 13], [1.0, 3.0, 0.0, 0.0], minimum=5) == [5, 15, 5, 5]


def test_rounding_keeps_an_integer_share_when_floating_error_overshoots() -> None:
    """Catches the floor's tolerance turned the wrong way and the overshoot loop adding."""
    # relative weights 1, 0 x4, 0.9565/11 = 0.087: zero-weight strata keep min(4, N_h) = 4, 4, 1, 2;
    # the first is full (30) and the last takes the remaining 54 - 30 - 11 = 13
    assert allocate(54, [30, 14, 19, 1, 2, 23], [11.0, 0, 0, 0, 0, 0.9565397294242834], 4) == [
        30,
        4,
        4,
        1,
        2,
        13,
    ]


def test_allocate_defaults_to_one_per_stratum_and_allocates_nothing_to_nothing() -> None:
    """Catches a different default minimum, and a crash when there is nothing to share."""
    assert allocate(3, [10, 10, 10], [1.0, 0.0, 0.0]) == [1, 1, 1]
    assert allocate(0, [], []) == []
    assert allocate(0, [0, 0], [0.0, 0.0]) == [0, 0]


def test_too_small_n_names_every_way_out() -> None:
    """Catches the minimum-per-stratum error losing its last suggestion."""
    with pytest.raises(SampleError) as caught:
        allocate(3, [10, 10], [1.0, 1.0], minimum=2)
    assert str(caught.value) == (
        "n=3 cannot give each of the 2 strata its minimum (4 traces in all); raise n to 4, "
        "lower the minimum, or stratify by fewer columns"
    )


def test_mismatched_lengths_are_an_error_not_a_silent_truncation() -> None:
    """Catches a stratum silently dropped when keys/values and populations differ in length."""
    from annotate.sampling.allocation import StratumPlan

    plan = StratumPlan(values=("billing_qa",), population=10, sample=2, judge_rate=None)
    assert plan.as_json(("feature",))["stratum"] == {"feature": "billing_qa"}
    with pytest.raises(ValueError):
        plan.as_json(("feature", "risk_category"))
    with pytest.raises(ValueError):
        explicit_sizes([("a",), ("b",)], [5], {("a",): 1, ("b",): 9})
