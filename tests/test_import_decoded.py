"""A JSON line decoded in C (annotate.traces.decoded) gives exactly what parse.py's checks give:
the same stored rows, content hashes, errors and warnings on a file mixing good rows with every
kind of bad row, and, line by line, either the same Trace or no answer (the full checks then
decide) for any JSON value in any field."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_import_fast_checks import imported, mixed_file

from annotate.ingest import generic
from annotate.traces import Record, decoded, parse_record
from tests.bench.synthetic import generate_rows


def test_the_decoded_path_stores_and_reports_exactly_what_the_full_checks_do(tmp_path, monkeypatch):
    source = mixed_file(tmp_path / "mixed.jsonl")
    ours = imported(tmp_path / "decoded.duckdb", source)
    with monkeypatch.context() as patch:
        patch.setattr(generic, "plain_trace", lambda raw, line: None)
        full = imported(tmp_path / "full.duckdb", source)
    assert ours["counts"]["rejected"] > 40 and ours["warnings"]
    for name, rows in full.items():
        assert ours[name] == rows, name


def test_the_bench_rows_take_the_decoded_path():
    """The common rows must be the fast ones, or the path is dead weight."""
    rows = [*generate_rows(50), *generate_rows(50, homogeneous=True)]
    taken = [decoded.plain_trace(json.dumps(row).encode(), i) for i, row in enumerate(rows)]
    assert all(taken)


def same_as_full(raw: bytes) -> None:
    trace = decoded.plain_trace(raw, 7)
    if trace is None:
        return
    reference = parse_record(Record(7, orjson.loads(raw)))
    assert trace == reference
    assert trace.content_hash == reference.content_hash and not reference.warnings


text = st.text(st.characters(codec=None, categories=None), max_size=8) | st.sampled_from(
    ["supported", "claim", "response", "", " ", "x" * 1001, "a\u0000b", "2026-03-01T12:00:00Z"]
)
scalars = (
    st.none()
    | st.booleans()
    | text
    | st.integers(min_value=-(2**65), max_value=2**65)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, 3, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 1e300])
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(text, inner, max_size=2)
)


BASE = {
    "trace_id": "t-1",
    "timestamp": "2026-03-01T12:00:00+02:00",
    "feature": "chat",
    "model": "m",
    "request": "why?",
    "context": [{"source": "kb://1", "text": "Refunds take 5 days."}, "naïve doc"],
    "response": "Refunds take 5 days.",
    "claims": [{"text": "Refunds", "start": 0, "end": 7}, {"text": "take", "start": 8, "end": 12}],
    "judge": [
        {"judge": "j", "level": "response", "label": "supported", "score": 0.5},
        {"judge": "j", "level": "claim", "claim": 1, "label": "supported", "explanation": "e"},
    ],
    "attributes": {"n": 3, "tier": "pro", "f": 0.5},
}
PATHS = [
    *BASE,
    "ratings",
    "tier",
    *[f"context.{i}.{key}" for i in (0, 1) for key in ("text", "source", "x")],
    *[f"claims.{i}.{key}" for i in (0, 1) for key in ("text", "start", "end", "x")],
    *[
        f"judge.{i}.{key}"
        for i in (0, 1)
        for key in ("judge", "level", "claim", "label", "score", "explanation", "ratings", "x")
    ],
    *[f"attributes.{key}" for key in ("n", "é", "k" * 1001, "")],
]
GONE = object()
NUDGES = [
    GONE,
    None,
    "",
    " ",
    0,
    1,
    2,
    7,
    -1,
    2**31,
    0.5,
    "claim",
    "response",
    [2**63],
    {"a": 1e300},
]
nudges = st.sampled_from(NUDGES)


def nudged(changes: list[tuple[str, Any]]) -> dict[str, Any]:
    """BASE with each (path, value) set, or removed for GONE; a path an earlier change took
    away is passed over."""
    row = json.loads(json.dumps(BASE))
    for path, value in changes:
        *parents, key = path.split(".")
        holder: Any = row
        for part in parents:
            holder = _child(holder, part)
        if isinstance(holder, list) and key.isdigit() and int(key) < len(holder):
            holder[int(key)] = None if value is GONE else value
        elif isinstance(holder, dict) and value is GONE:
            holder.pop(key, None)
        elif isinstance(holder, dict):
            holder[key] = value
    return row


def _child(holder: Any, part: str) -> Any:
    if isinstance(holder, list) and part.isdigit() and int(part) < len(holder):
        return holder[int(part)]
    return holder.get(part) if isinstance(holder, dict) else None


def test_each_field_nudged_alone_is_the_full_checks_trace():
    taken = 0
    for path in PATHS:
        for value in NUDGES:
            raw = json.dumps(nudged([(path, value)])).encode()
            same_as_full(raw)
            taken += decoded.plain_trace(raw, 7) is not None
    assert taken > len(PATHS)  # the decoded path takes many of them, not none


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), nudges | values), max_size=3))
def test_a_row_the_decoded_path_takes_is_the_full_checks_trace(changes: list[tuple[str, Any]]):
    data = nudged(changes)
    same_as_full(json.dumps(data).encode())
    same_as_full(json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def test_content_hashes_are_the_ones_earlier_versions_stored():
    """A re-import must find its rows duplicates, not conflicts: the digest of these rows'
    hashes as commit c950399 (before the decoded path) computed them."""
    rows = [*generate_rows(200), *generate_rows(100, homogeneous=True)]
    rows.append(
        {
            "trace_id": "u",
            "response": "naïve ✓",
            "context": "",
            "attributes": {"z": {"b": [1, 2.5, None]}, "é": "\u2028", "a": -0.0},
            "ratings": {"relevance": 4},
            "judge": {"label": "x", "ratings": {"c": 1}},
        }
    )
    lines = [json.dumps(row).encode() for row in rows]
    traces = [
        decoded.plain_trace(raw, i) or parse_record(Record(i, orjson.loads(raw)))
        for i, raw in enumerate(lines)
    ]
    digest = hashlib.sha256("".join(t.content_hash for t in traces).encode()).hexdigest()
    assert digest == "f531e40da2e68b8560bceef9e247693fbbcd29f7254dd143d092e7285ea6973d"
