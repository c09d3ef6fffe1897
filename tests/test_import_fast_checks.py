"""The import's fast checks (a verdict, a claim, an attribute of the usual shape taken at once)
give exactly what the full checks give: the same stored traces, contexts, claims and verdicts,
and the same errors and warnings, row for row, on a file mixing good rows with every kind of
bad row the per-row checks report."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bad_corpus
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.ingest.importer import import_traces
from annotate.store import open_store
from annotate.traces import parse, plain
from tests.bench.synthetic import generate_rows

TABLES = {
    "traces": "SELECT trace_id, source_line, content_hash, timestamp, feature, risk_category, "
    "model, request, response, judgeable, attributes::VARCHAR FROM traces ORDER BY source_line",
    "contexts": "SELECT * FROM contexts ORDER BY trace_id, position",
    "claims": "SELECT * FROM claims ORDER BY trace_id, claim_index",
    "verdicts": "SELECT trace_id, judge, level, claim_index, label, score, explanation, origin "
    "FROM judge_verdicts ORDER BY ALL",
    "errors": "SELECT line, field, message FROM import_errors ORDER BY ALL",
}


def full_checks_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference: every row through every check, as before the fast checks existed."""
    monkeypatch.setattr(plain, "plain_verdict", lambda item: None)
    monkeypatch.setattr(plain, "plain_attribute", lambda key, value: False)
    monkeypatch.setattr(plain, "plain_claim", lambda item: None)


def odd_rows() -> list[dict[str, Any]]:
    """Rows at the edges of the fast checks: each either passes both ways or fails both ways."""
    text = "Refunds take 5 days."
    base = {"trace_id": "o", "response": text, "context": ["c"]}
    verdicts: list[Any] = [
        {"label": "supported"},
        {"label": "supported", "level": "claim"},
        {"label": "supported", "claim": 0},
        {"label": "supported", "level": "", "claim": 0},
        {"label": "supported", "level": "response", "claim": "x"},
        {"label": "supported", "level": "claim", "claim": True},
        {"label": "supported", "level": "claim", "claim": 2**31},
        {"label": "supported", "level": "claim", "claim": -1},
        {"label": "supported", "level": "claim", "claim": 1},
        {"label": "", "level": "response"},
        {"label": "x" * 1001, "level": "response"},
        {"label": "a\u0000b", "level": "response"},
        {"label": "supported", "level": "response", "score": True},
        {"label": "supported", "level": "response", "score": 10**400},
        {"label": "supported", "level": "response", "score": 2},
        {"label": "supported", "level": "response", "score": "0.5"},
        {"label": "supported", "level": "response", "judge": 7},
        {"label": "supported", "level": "response", "judge": 1.5},
        {"label": "supported", "level": "response", "judge": ""},
        {"label": "supported", "level": "response", "judge": "j" * 1001},
        {"label": "supported", "level": "response", "explanation": 5},
        {"label": "supported", "level": "response", "explanation": "\ud800"},
        {"label": "supported", "level": "maybe"},
        {"label": "é", "level": "response", "explanation": "naïve"},
        "not an object",
    ]
    rows = [{**base, "trace_id": f"v-{i}", "judge": [v]} for i, v in enumerate(verdicts)]
    claims: list[Any] = [
        {"text": text, "start": 0, "end": len(text)},
        {"text": text, "start": 3, "end": 9},
        {"text": text, "start": 0},
        {"text": text, "start": 5, "end": 2},
        {"text": text, "start": True, "end": len(text)},
        {"text": text, "start": 0, "end": 2**31},
        {"text": "take", "start": 0, "end": 4},
        {"text": 5, "start": 0, "end": 1},
        {"text": "", "start": 0, "end": 0},
        text,
    ]
    rows += [{**base, "trace_id": f"c-{i}", "claims": [c]} for i, c in enumerate(claims)]
    rows.append(
        {
            **base,
            "trace_id": "c-overlap",
            "claims": [
                {"text": text, "start": 0, "end": len(text)},
                {"text": "5 days", "start": 13, "end": 19},
            ],
        }
    )
    attributes: list[Any] = [
        {"n": 2**63 - 1},
        {"n": -(2**63)},
        {"n": 2**63},
        {"f": 1.5, "t": True, "z": None},
        {"é": "x"},
        {"k": "naïve"},
        {"k": "a\u0000"},
        {"k" * 1001: 1},
        {"nested": {"a": [1, {"b": 2}]}},
        {"k": "\ud800"},
    ]
    rows += [{**base, "trace_id": f"a-{i}", "attributes": a} for i, a in enumerate(attributes)]
    rows.append({**base, "trace_id": "a-top", "extra": {"x": 1}, "tier": "pro"})
    rows.append({**base, "trace_id": "ctx", "context": [{"text": "t", "source": 3}, "u"]})
    rows.append({**base, "trace_id": "ctx2", "context": [{"text": "t", "source": "s", "x": 1}]})
    rows.append({**base, "trace_id": "v-0", "response": "a different response"})  # a conflict
    return rows


def mixed_file(path: Path) -> Path:
    """Good rows of the bench's shapes, every bad JSON Lines kind of the bad-input corpus
    (their good rows come back as duplicates), and the odd rows above."""
    parts = [json.dumps(row).encode() + b"\n" for row in generate_rows(300)]
    parts += [json.dumps(row).encode() + b"\n" for row in generate_rows(50, homogeneous=True)]
    for kind in bad_corpus.kinds():
        if kind.suffix == "jsonl" and kind.route == "traces":
            parts.append(kind.data())
    parts += [json.dumps(row).encode() + b"\n" for row in odd_rows()]
    parts += [json.dumps(row).encode() + b"\n" for row in generate_rows(20)]  # duplicates
    path.write_bytes(b"".join(parts))
    return path


def imported(
    db: Path,
    source: Path,
    tables: dict[str, str] = TABLES,
    progress: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """What an import of `source` into a new store at `db` reports and stores (`tables`)."""
    store = open_store(db)
    try:
        report = import_traces(store, source, fmt="jsonl", progress=progress)
        stored = {name: store.fetchall(sql) for name, sql in tables.items()}
    finally:
        store.close()
    return {
        "counts": report.counts(),
        "errors": [str(e) for e in report.errors],
        "warnings": [str(w) for w in report.warnings],
        "warned": report.warned,
        "context_from": report.context_from,
        "readers": len(report.readers_peak_rss),
        **stored,
    }


def test_fast_checks_store_and_report_exactly_what_the_full_checks_do(tmp_path, monkeypatch):
    source = mixed_file(tmp_path / "mixed.jsonl")
    fast = imported(tmp_path / "fast.duckdb", source)
    with monkeypatch.context() as patch:
        full_checks_only(patch)
        full = imported(tmp_path / "full.duckdb", source)
    assert fast["counts"] == full["counts"]
    assert fast["counts"]["rejected"] > 40 and fast["counts"]["duplicates"] >= 20
    assert fast["counts"]["conflicts"] >= 1 and fast["warnings"]
    for name in ("errors", "warnings", *TABLES):
        assert len(fast[name]) == len(full[name]), name
        for ours, reference in zip(fast[name], full[name], strict=True):
            assert ours == reference, name


def outcome(function: Any, *args: Any) -> Any:
    try:
        return ("ok", function(*args))
    except parse._Invalid as exc:
        return ("invalid", exc.field, exc.message)


text = st.text(st.characters(codec=None, categories=None), max_size=6) | st.sampled_from(
    ["supported", "claim", "response", "", "x" * 1001, "a\u0000b"]
)
numbers = (
    st.integers(min_value=-(2**65), max_value=2**65)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**63 - 1, 2**63, -(2**63), True, False])
)
values = st.none() | text | numbers | st.lists(st.integers(), max_size=1)
verdicts = st.dictionaries(
    st.sampled_from(["judge", "level", "claim", "label", "score", "explanation"]), values
)
claims = st.dictionaries(st.sampled_from(["text", "start", "end"]), values)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(verdicts, st.integers(min_value=0, max_value=3))
def test_a_verdict_is_the_same_through_the_fast_check(item, index):
    assert outcome(parse._parse_verdict, item, index) == outcome(
        parse._parse_verdict_checked, item, index
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(claims, st.integers(min_value=0, max_value=3))
def test_a_claim_is_the_same_through_the_fast_check(item, index):
    assert outcome(parse._parse_claim, item, index) == outcome(
        parse._parse_claim_checked, item, index
    )


@settings(max_examples=400, deadline=None)
@given(text, values)
def test_an_attribute_the_fast_check_takes_passes_the_full_checks(key, value):
    if plain.plain_attribute(key, value):
        parse.check_name(str(key))
        parse.check_json_value(value)
        assert not isinstance(value, float) or math.isfinite(value)
