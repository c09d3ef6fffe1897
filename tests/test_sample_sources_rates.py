"""Rates of a sample drawn in place are those of the same sample drawn after importing the
population: the judge's counts per stratum, the judge-only and PPI rates and intervals, the
auditor bundle. The reviewers label the drawn claims the same way in both stores."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.judge.labels import set_label
from annotate.rates.bundle import build_bundle, verify_bundle
from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import frame_judge_counts, load_inputs
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample, sample_trace_ids, top_up
from annotate.sampling.sources import draw_from_source, make_source
from annotate.store import open_store
from annotate.store.frame_verdicts import (
    drawn_signatures,
    merge_signatures,
    recorded_signatures,
    store_frame_signatures,
)
from annotate.store.samples import Filters

DAYS = ("2026-04-01", "2026-04-02")
FEATURES = ("billing_qa", "hr_policy", "medical_info")
SPEC = SampleSpec(name="s", n=90, by=("feature",), seed=11)
LEVELS = ["claim", "response"]
JUDGE_ESTIMATORS = ("judge_raw", "judge_corrected", "rogan_gladen", "weighted_human")


def _verdicts(rng: random.Random, claims: int) -> list[dict]:
    """Claim verdicts of judge j (some revised: the latest counts), at times a response
    verdict of j, half the time one of k; labels the default mapping knows and one it
    does not ("meh"); "hallucinated" is rare, so mostly in traces left in the files."""
    found = []
    for index in range(claims):
        if rng.random() < 0.15:  # revised: the first verdict is superseded
            found.append({"judge": "j", "level": "claim", "claim": index, "label": "unsupported"})
        label = rng.choices(
            ["supported", "unsupported", "meh", "hallucinated", "unknown"], [55, 30, 6, 2, 7]
        )[0]
        found.append({"judge": "j", "claim": index, "label": label})  # level from the claim
    if rng.random() < 0.2:
        found.append({"judge": "j", "level": "response", "label": rng.choice(["pass", "fail"])})
    if rng.random() < 0.5:
        found.append(
            {"judge": "k", "level": "response", "label": rng.choice(["supported", "unsupported"])}
        )
    return [] if rng.random() < 0.08 else found


def make_rows(count: int) -> list[dict]:
    rng = random.Random(17)
    rows = []
    for i in range(count):
        claims = 1 + (i % 2)
        sentences = [f"Fact {i}.{c} holds." for c in range(claims)]
        response = " ".join(sentences)
        spans, start = [], 0
        for sentence in sentences:
            spans.append({"text": sentence, "start": start, "end": start + len(sentence)})
            start += len(sentence) + 1
        rows.append(
            {
                "trace_id": f"t-{i:04d}",
                "timestamp": f"{DAYS[i % 2]}T09:00:00Z",
                "feature": rng.choice(FEATURES),
                "risk_category": rng.choice(["high", "low"]),
                "model": rng.choice(["m-1", "m-2"]),
                "response": response,
                "context": [] if i % 25 == 0 else ["the source document"],
                "claims": spans,
                "judge": _verdicts(rng, claims),
            }
        )
    return rows


def write_dataset(root: Path, rows: list[dict]) -> list[Path]:
    paths = []
    for d, day in enumerate(DAYS):
        mine = [row for i, row in enumerate(rows) if i % 2 == d]
        for k in range(2):
            folder = root / f"day={day}"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"part-{k}.parquet"
            pq.write_table(pa.Table.from_pylist(mine[k::2]), path)
            paths.append(path)
    return paths


def label_lines(store, path: Path) -> Path:
    """Two reviewers agree on each drawn claim; the label is a function of the claim alone."""
    claims = store.fetchall(
        "SELECT c.trace_id, c.claim_index FROM claims c JOIN sample_units u USING (trace_id) "
        "WHERE u.sample = 's' ORDER BY 1, 2"
    )
    lines = []
    for trace, index in claims:
        digest = hashlib.sha256(f"{trace}/{index}".encode()).digest()[0]
        label = "contradicted" if digest % 3 == 0 else "supported"
        for reviewer in ("rita", "rolf"):
            lines.append({"trace_id": trace, "claim": index, "reviewer": reviewer, "label": label})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """(imported store, in-place store): the same files, the same sample, the same labels."""
    root = tmp_path_factory.mktemp("lake")
    paths = write_dataset(root / "traces", make_rows(700))
    full = open_store(root / "full.duckdb")
    for path in paths:
        import_traces(full, path, fmt="parquet")
    draw_sample(full, SPEC)
    lake = open_store(root / "lake.duckdb")
    draw_from_source(lake, SPEC, make_source(str(root / "traces/**/*.parquet"), None, {}))
    for store, name in ((full, "full"), (lake, "lake")):
        import_labels(store, label_lines(store, root / f"{name}-labels.jsonl"))
    yield full, lake, root
    full.close()
    lake.close()


def rates(store, judge: str, by=("feature",)) -> list[dict]:
    inputs = load_inputs(store, "s", by, judge)
    return rate_rows(inputs, by, LEVELS, JUDGE_ESTIMATORS, resamples=200, seed=3)


def test_the_same_sample_and_only_its_traces_in_the_lake_store(stores):
    full, lake, _ = stores
    assert sorted(sample_trace_ids(lake, "s")) == sorted(sample_trace_ids(full, "s"))
    assert (
        lake.scalar("SELECT count(*) FROM traces")
        == SPEC.n
        < full.scalar("SELECT count(*) FROM traces")
    )


def test_judge_counts_per_stratum_equal_the_imported_frames(stores):
    full, lake, _ = stores
    imported = store_frame_signatures(full, Filters(), SPEC.by, None)
    in_place = merge_signatures(recorded_signatures(lake, "s"), drawn_signatures(lake, "s"))
    assert in_place == imported
    assert {judge for _, judge, *_ in imported} == {"j", "k"}
    # through the label mapping, per stratum
    for judge in ("j", "k"):
        counts = frame_judge_counts(load_inputs(lake, "s", (), judge))
        assert counts == frame_judge_counts(load_inputs(full, "s", (), judge))
        assert sum(c["traces"] for c in counts.values()) == full.scalar(
            "SELECT count(*) FROM traces WHERE judgeable"
        )


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_json_lines_and_csv_verdicts_count_as_parquets(stores, tmp_path, fmt):
    """The verdicts read through JSON (a JSON Lines object, a CSV cell of JSON text) give
    the same counts as the imported Parquet files."""
    import csv

    full, _, _ = stores
    rows = make_rows(700)
    path = tmp_path / f"t.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            for r in rows:
                cells = {k: json.dumps(r[k]) for k in ("context", "claims", "judge")}
                writer.writerow({**r, **cells})
    store = open_store(tmp_path / "other.duckdb")
    try:
        draw_from_source(store, SPEC, make_source(str(path), None, {}))
        in_place = merge_signatures(recorded_signatures(store, "s"), drawn_signatures(store, "s"))
    finally:
        store.close()
    assert in_place == store_frame_signatures(full, Filters(), SPEC.by, None)


@pytest.mark.parametrize("judge", ["j", "k"])
def test_judge_only_and_ppi_rates_equal_the_imported_ones(stores, judge):
    full, lake, _ = stores
    expected = rates(full, judge)
    got = rates(lake, judge)
    assert got == expected
    found = {(r["estimator"], r["level"]) for r in got if r["rate"] is not None and not r["slice"]}
    assert {("judge_raw", "response"), ("judge_corrected", "response")} <= found
    if judge == "j":  # k judges responses only
        assert {("judge_raw", "claim"), ("judge_corrected", "claim")} <= found


def test_a_later_label_mapping_applies_to_the_traces_left_in_the_files(stores):
    """ "meh" has no default; mapped later, both stores count it the same way."""
    full, lake, _ = stores
    before = rates(lake, "j")
    for store in (full, lake):
        set_label(store, "j", "meh", "unsupported", "lena")
    assert rates(lake, "j") == rates(full, "j") != before


def test_slices_by_other_columns_say_why_the_judge_rates_are_missing(stores):
    full, lake, _ = stores
    rows = rates(lake, "j", by=("model",))
    judged = [r for r in rows if r["estimator"] != "weighted_human"]
    assert all(
        r["rate"] is None and "import the population" in r["reason"] for r in judged if r["slice"]
    )
    assert [r for r in judged if not r["slice"]] == [
        r
        for r in rates(full, "j", by=("model",))
        if r["estimator"] != "weighted_human" and not r["slice"]
    ]


def test_the_auditor_bundle_of_a_lake_sample_recomputes(stores, tmp_path):
    _, lake, _ = stores
    built = build_bundle(lake, "s", tmp_path / "b.zip", by=("feature",), judge="j", resamples=50)
    checked = verify_bundle(built["path"])
    assert checked["ok"], checked["problems"]
    document = json.loads(__import__("zipfile").ZipFile(built["path"]).read("rates.json"))
    assert any(
        r["estimator"] == "judge_corrected" and r["rate"] is not None for r in document["rows"]
    )


def test_a_top_up_keeps_the_counts_equal(stores):
    full, lake, root = stores
    for store in (full, lake):
        top_up(store, "s", 15)
    assert sorted(sample_trace_ids(lake, "s")) == sorted(sample_trace_ids(full, "s"))
    imported = store_frame_signatures(full, Filters(), SPEC.by, None)
    in_place = merge_signatures(recorded_signatures(lake, "s"), drawn_signatures(lake, "s"))
    assert in_place == imported
    assert frame_judge_counts(load_inputs(lake, "s", (), "j")) == frame_judge_counts(
        load_inputs(full, "s", (), "j")
    )


def test_the_rates_page_shows_judge_rates_of_a_lake_sample(tmp_path, monkeypatch):
    from conftest import run_app

    from annotate.accounts.users import User

    paths = write_dataset(tmp_path / "traces", make_rows(300))
    path = tmp_path / "page.duckdb"
    store = open_store(path)
    source = make_source(str(tmp_path / "traces/**/*.parquet"), None, {})
    draw_from_source(store, SampleSpec(name="s", n=60, by=("feature",), seed=2), source)
    import_labels(store, label_lines(store, tmp_path / "labels.jsonl"))
    store.close()
    assert len(paths) == 4
    monkeypatch.setenv("ANNOTATE_DB", str(path))
    app = run_app(User("audrey", "auditor"), "pages/rates.py")
    table = app.dataframe[0].value
    overall = table[table["slice"] == "overall"]
    judged = overall[overall["estimator"].isin(["judge_raw", "judge_corrected"])]
    assert len(judged) and judged["rate"].notna().all(), judged


def test_a_lake_sample_drawn_before_the_counts_were_kept_gives_no_judge_rate(tmp_path):
    """Migration 0012 marks the source samples drawn before it: their judge rates say to
    draw again, instead of reading the missing rest of the frame as unjudged."""
    write_dataset(tmp_path / "traces", make_rows(200))
    path = tmp_path / "old.duckdb"
    store = open_store(path)
    source = make_source(str(tmp_path / "traces/**/*.parquet"), None, {})
    draw_from_source(store, SampleSpec(name="s", n=40, by=("feature",), seed=2), source)
    store.execute("DELETE FROM schema_migrations WHERE name = '0012_source_judge_counts'")
    store.close()
    store = open_store(path)  # 0012 applied again, as to a store from before it
    try:
        rows = rates(store, "j", by=())
    finally:
        store.close()
    judged = [r for r in rows if r["estimator"] in ("judge_raw", "judge_corrected")]
    assert judged and all(r["rate"] is None and "draw it again" in r["reason"] for r in judged)
