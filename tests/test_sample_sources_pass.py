"""Sampling in place in one aggregate pass (issue 38): the grouped pass gives the counts, the
judge rates, the ranks and the undrawn traces' signatures of the per-row frame table (whose
results tests/test_sample_sources_pinned.py pins), over verdict lists of every shape, and
makes no per-row table unless a drawn trace lies past the groups' first keys."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotate.sampling import sources
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.sources import SourceFrame, draw_from_source, make_source

OUTCOMES = [
    ("j", "unsupported", "unsupported"),
    ("j", "supported", "supported"),
    ("k", "unsupported", "unsupported"),
    ("k", "abstain", "abstained"),
    ("", "supported", "supported"),  # an unnamed judge's label: never matched by name
]


def verdict(rng: random.Random) -> dict:
    claim = rng.choice((None, 0, 1, 1))
    return {
        "judge": rng.choice(("j", "j", "k", "")),
        "level": rng.choice(("claim" if claim is not None else "response", "", "claim")),
        "claim": claim,
        "label": rng.choice(("supported", "unsupported", "supported", "abstain", "")),
    }


def make_rows(count: int) -> list[dict]:
    """0-5 verdicts a trace: repeated claims (the latest counts), blank levels and labels,
    claim-level verdicts without a claim, unnamed judges."""
    rng = random.Random(381)
    return [
        {
            "trace_id": f"tr-{i:04d}",
            "feature": rng.choice(("billing_qa", "hr_policy", None)),
            "risk_category": "high" if rng.random() < 0.3 else "low",
            "response": "the answer. A second claim.",
            "claims": ["the answer", "a second claim"],
            "context": rng.choice((["doc"], ["doc"], [], [" "])),
            "judge": [verdict(rng) for _ in range(rng.choice((0, 1, 1, 2, 3, 5)))],
        }
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pass")
    rows = make_rows(900)
    (root / "parquet").mkdir()
    pq.write_table(pa.Table.from_pylist(rows[::2]), root / "parquet" / "a.parquet")
    pq.write_table(pa.Table.from_pylist(rows[1::2]), root / "parquet" / "b.parquet")
    (root / "traces.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


GLOBS = {"parquet": "parquet/*.parquet", "jsonl": "traces.jsonl"}
SPEC = SampleSpec(name="s", n=30, by=("feature", "risk_category"), seed=11)


def frames(store, lake: Path, fmt: str, depth: int) -> tuple[SourceFrame, SourceFrame]:
    """The grouped pass keeping `depth` first keys a group, and the per-row table."""
    source = make_source(str(lake / GLOBS[fmt]), None, {})
    grouped, table = SourceFrame(store, source, SPEC, depth), SourceFrame(store, source, SPEC)
    table.grouped = False
    assert grouped.grouped
    return grouped, table


@pytest.mark.parametrize("fmt", sorted(GLOBS))
def test_the_pass_counts_ranks_and_signs_as_the_per_row_table(lake, fresh_store, fmt):
    grouped, table = frames(fresh_store, lake, fmt, depth=4)
    counts = grouped.strata(OUTCOMES)
    assert counts == table.strata(OUTCOMES)
    rates = [rate for _, _, rate in counts[0]]
    assert any(rate is not None and 0 < rate < 1 for rate in rates)
    ranges = [(key, 0, 9) for key, _, _ in counts[0]]  # deeper than the pass kept: read again
    units = grouped.ranks(ranges)
    assert units == table.ranks(ranges)
    assert len(units) == sum(min(9, population) for _, population, _ in counts[0])
    drawn = [trace_id for trace_id, _, _ in units]
    signed = grouped.undrawn_signatures(drawn)
    assert signed == table.undrawn_signatures(drawn)
    assert any(len(labels) > 1 for _, _, _, labels, _, _ in signed)  # several claims' labels
    assert grouped.table is None  # no per-row table was made
    grouped.close()
    table.close()


def test_a_drawn_trace_past_the_first_keys_is_signed_by_the_table(lake, fresh_store):
    grouped, table = frames(fresh_store, lake, "parquet", depth=3)
    counts, _, _ = grouped.strata(OUTCOMES)
    deep = table.ranks([(key, 3, 6) for key, _, _ in counts])  # ranked past the groups' keys
    drawn = [u[0] for u in grouped.ranks([(key, 0, 3) for key, _, _ in counts])]
    drawn += [deep[0][0], "not-in-the-files"]
    assert grouped.undrawn_signatures(drawn) == table.undrawn_signatures(drawn)
    assert grouped.table is not None
    grouped.close()
    table.close()


def test_a_draw_deeper_than_the_pass_keeps_reads_the_per_row_table(lake, fresh_store, monkeypatch):
    grouped, table = frames(fresh_store, lake, "parquet", depth=4)
    counts, _, _ = grouped.strata(OUTCOMES)
    monkeypatch.setattr(sources, "MOST_KEPT", 6)  # keys a group may hold in DuckDB's state
    ranges = [(key, 0, 9) for key, _, _ in counts]
    assert grouped.ranks(ranges) == table.ranks(ranges)
    assert not grouped.grouped and grouped.table is not None
    grouped.close()
    table.close()


def is_valid(item: dict) -> bool:
    """A verdict `annotate import` takes: a label, and a claim when claim-level."""
    return bool(item["label"]) and (item["claim"] is not None or item["level"] != "claim")


def test_a_draw_in_place_leaves_no_temporary_table(tmp_path, fresh_store):
    rows = [{**row, "judge": [v for v in row["judge"] if is_valid(v)]} for row in make_rows(300)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "valid.parquet")
    plan = draw_from_source(
        fresh_store, SPEC, make_source(str(tmp_path / "valid.parquet"), None, {})
    )
    assert len(plan.trace_ids) == SPEC.n
    temp = fresh_store.fetchall("SELECT table_name FROM duckdb_tables() WHERE temporary")
    assert temp == []  # the pass's groups dropped with the draw
