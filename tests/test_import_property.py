"""Property: any JSON value in any field of a trace row never breaks the import; every row is
either stored or reported (or counted as a duplicate of one that is)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.ingest.importer import import_traces
from annotate.store import open_store
from annotate.traces import KNOWN_FIELDS

# text with lone surrogates, NUL and other control characters
text = st.text(st.characters(codec=None, categories=None), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
    | st.sampled_from(["9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+05:00", "2026-03-01"])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
claim_like = st.lists(
    st.fixed_dictionaries({"text": json_values | text, "start": json_values, "end": json_values}),
    max_size=3,
)
judge_like = st.lists(
    st.fixed_dictionaries(
        {"label": json_values, "level": json_values, "claim": json_values, "score": json_values}
    ),
    max_size=2,
)
MISSING = object()


@st.composite
def rows(draw) -> dict:
    row: dict = {
        "trace_id": draw(st.text(max_size=4)),
        "response": "Refunds take 5 days.",
        "context": [],
    }
    for name in (*KNOWN_FIELDS, "extra"):
        choice = draw(st.sampled_from(["keep", "value", "shaped", "missing"]))
        if choice == "value":
            row[name] = draw(json_values)
        elif choice == "shaped" and name in ("claims", "judge"):
            row[name] = draw(claim_like if name == "claims" else judge_like)
        elif choice == "missing":
            row.pop(name, None)
    return row


def dumps(row: dict) -> str:
    return json.dumps(row, allow_nan=True, ensure_ascii=True)  # NaN tokens, surrogate escapes


@settings(
    max_examples=60,  # each opens a store (every migration): 150 cost 78 s of a CI worker
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(rows(), min_size=1, max_size=4))
def test_any_json_in_any_field_is_stored_or_reported(batch):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        path.write_text("".join(dumps(row) + "\n" for row in batch))
        store = open_store(":memory:")
        try:
            report = import_traces(store, path)
            stored = {line for (line,) in store.fetchall("SELECT source_line FROM traces")}
        finally:
            store.close()
    reported = {error.line for error in report.errors}
    assert stored.isdisjoint(reported)
    unaccounted = set(range(1, len(batch) + 1)) - stored - reported
    assert len(unaccounted) == report.duplicates
    assert report.imported + report.rejected + report.duplicates + report.conflicts == len(batch)
