"""Sampling trace files in place (annotate sample --source): same draw as import-then-sample."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotate.errors import InputError
from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample, sample_trace_ids, top_up
from annotate.sampling.sources import draw_from_source, make_source
from annotate.store import open_store
from annotate.store.frame_verdicts import (
    drawn_signatures,
    merge_signatures,
    recorded_signatures,
)
from annotate.store.samples import sample_row

DAYS = ("2026-03-01", "2026-03-02", "2026-03-03")
FEATURES = ("billing_qa", "hr_policy", "medical_info")


def make_rows(count: int, seed: int = 5) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        feature = rng.choice(FEATURES)
        rows.append(
            {
                "trace_id": f"tr-{i:05d}",
                "timestamp": f"{DAYS[i % 3]}T10:00:00Z",
                "feature": feature,
                "risk_category": "high" if rng.random() < 0.25 else "low",
                "model": rng.choice(["m-1", "m-2"]),
                "response": "the answer",
                "context": [] if i % 30 == 0 else (["  "] if i % 31 == 0 else ["doc"]),
                "judge": [
                    {
                        "judge": "j",
                        "level": "response",
                        "label": "unsupported" if rng.random() < 0.3 else "supported",
                    }
                ],
            }
        )
    return rows


def write_dataset(root: Path, rows: list[dict], files_per_day: int = 2) -> list[Path]:
    """Hive-partitioned by day: root/day=YYYY-MM-DD/part-K.parquet, written with pyarrow."""
    paths = []
    for d, day in enumerate(DAYS):
        mine = [row for i, row in enumerate(rows) if i % 3 == d]
        for k in range(files_per_day):
            part = mine[k::files_per_day]
            folder = root / f"day={day}"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"part-{k}.parquet"
            pq.write_table(pa.Table.from_pylist(part), path)
            paths.append(path)
    return paths


SPEC = SampleSpec(name="lake", n=60, by=("feature", "risk_category"), seed=42)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("lake")
    rows = make_rows(900)
    return root, rows, write_dataset(root / "traces", rows)


@pytest.fixture(scope="module")
def imported(dataset, tmp_path_factory):
    """The baseline: every file imported, then sampled the usual way."""
    _, _, paths = dataset
    store = open_store(tmp_path_factory.mktemp("full") / "full.duckdb")
    for path in paths:
        import_traces(store, path, fmt="parquet")
    plan = draw_sample(store, SPEC)
    yield store, plan
    store.close()


def source_of(root: Path):
    return make_source(str(root / "traces" / "**" / "*.parquet"), None, {})


def test_in_place_draw_equals_import_then_sample(dataset, imported, fresh_store):
    root, rows, _ = dataset
    full_store, full_plan = imported
    plan = draw_from_source(fresh_store, SPEC, source_of(root))

    assert sorted(plan.trace_ids) == sorted(full_plan.trace_ids)
    assert len(plan.trace_ids) == SPEC.n
    # only the drawn traces are in the store
    stored = {r[0] for r in fresh_store.fetchall("SELECT trace_id FROM traces")}
    assert stored == set(plan.trace_ids)
    # frame and stratum counts equal a direct count over the rows written
    judgeable = [r for r in rows if any(c.strip() for c in r["context"])]
    direct = Counter((r["feature"], r["risk_category"]) for r in judgeable)
    assert plan.frame_size == len(judgeable) == full_plan.frame_size
    assert {s.values: s.population for s in plan.strata} == dict(direct)
    assert plan.excluded == {
        "no_context": len(rows) - len(judgeable),
        "filtered_out": 0,
        "canary_replay": 0,
    }
    row = sample_row(fresh_store, "lake")
    assert row["source"]["format"] == "parquet"
    assert row["frame_size"] == len(judgeable)
    assert sorted(sample_trace_ids(fresh_store, "lake")) == sorted(full_plan.trace_ids)
    # the judge's verdict counts per stratum, as in the files: the undrawn ones recorded,
    # the drawn ones imported
    counts = Counter()
    for r in judgeable:
        counts[(r["feature"], r["risk_category"], r["judge"][0]["label"])] += 1
    got = Counter()
    frame = merge_signatures(
        recorded_signatures(fresh_store, "lake"), drawn_signatures(fresh_store, "lake")
    )
    for key, judge, response, labels, _, traces in frame:
        assert judge == "j" and labels == ()
        got[(*json.loads(key), response)] += traces
    assert got == counts
    drawn = sum(row[-1] for row in recorded_signatures(fresh_store, "lake"))
    assert drawn == len(judgeable) - SPEC.n


def test_top_up_on_a_source_matches_import_path(dataset, tmp_path, fresh_store):
    root, _, paths = dataset
    spec = SampleSpec(name="grow", n=30, by=("feature",), seed=7)
    draw_from_source(fresh_store, spec, source_of(root))
    added = top_up(fresh_store, "grow", 12)

    base = open_store(tmp_path / "base.duckdb")
    for path in paths:
        import_traces(base, path, fmt="parquet")
    draw_sample(base, spec)
    expected = top_up(base, "grow", 12)
    assert sorted(added.trace_ids) == sorted(expected.trace_ids)
    assert sorted(sample_trace_ids(fresh_store, "grow")) == sorted(sample_trace_ids(base, "grow"))
    assert fresh_store.scalar("SELECT count(*) FROM traces") == 42
    base.close()


def test_bad_drawn_row_is_reported_by_file_and_row(tmp_path, fresh_store):
    rows = make_rows(12, seed=1)
    for row in rows:
        row["context"] = ["doc"]
    rows[4]["timestamp"] = "not a date"
    paths = write_dataset(tmp_path / "traces", rows, files_per_day=1)
    bad = next(p for p in paths if "day=2026-03-02" in str(p))  # row 4 is the 2nd of day 2
    spec = SampleSpec(name="all", n=12, by=("feature",), seed=1, min_per_stratum=0)
    with pytest.raises(InputError) as caught:
        draw_from_source(fresh_store, spec, source_of(tmp_path))
    message = str(caught.value)
    assert f"{bad}, row 2: timestamp:" in message
    assert fresh_store.scalar("SELECT count(*) FROM traces") == 0
    assert fresh_store.scalar("SELECT count(*) FROM samples") == 0


def test_cli_sample_source(dataset, cli):
    root, _, _ = dataset
    result = cli(
        "sample",
        "--source",
        str(root / "traces" / "**" / "*.parquet"),
        "--name",
        "c",
        "--n",
        "20",
        "--by",
        "feature",
        "--seed",
        "3",
        "--json",
    )
    assert result.code == 0, result.err
    assert len(result.json()["trace_ids"]) == 20
    missing = cli(
        "sample",
        "--source",
        str(root / "nothing" / "*.parquet"),
        "--name",
        "d",
        "--n",
        "5",
        "--seed",
        "3",
    )
    assert missing.code == 2 and "matches no file" in missing.err


# --- the warehouse draws: --emit-sql, then --from-counts / --from-rows -------------------

WAREHOUSE_SPEC = SampleSpec(name="wh", n=40, by=("feature", "risk_category"), seed=42)


def warehouse_table(rows: list[dict]) -> pa.Table:
    """The rows as a warehouse table would hold them, with the `judgeable` column."""
    flat = [{**r, "judgeable": any(c.strip() for c in r["context"])} for r in rows]
    for r in flat:
        r["judge_label"] = r["judge"][0]["label"]
    return pa.Table.from_pylist(flat)


def test_duckdb_emitted_sql_draws_the_in_place_sample(dataset, tmp_path, fresh_store):
    import duckdb

    from annotate.sampling.results import draw_from_results
    from annotate.sampling.warehouse import emit

    root, rows, _ = dataset
    in_place = draw_from_source(fresh_store, WAREHOUSE_SPEC, source_of(root))

    counts_sql, rows_sql = emit(WAREHOUSE_SPEC, "lake_traces", "duckdb", judge_label=True)
    con = duckdb.connect()
    lake_traces = warehouse_table(rows)  # noqa: F841 - read by name from the SQL
    con.execute("CREATE TABLE lake_traces AS SELECT * FROM lake_traces")
    counts_csv, rows_parquet = tmp_path / "counts.csv", tmp_path / "rows.parquet"
    con.execute(f"COPY ({counts_sql}) TO '{counts_csv}' (HEADER)")
    con.execute(f"COPY ({rows_sql}) TO '{rows_parquet}' (FORMAT parquet)")
    warehouse_counts = con.execute(
        f"SELECT feature, risk_category, sum(traces) FROM ({counts_sql}) GROUP BY ALL"
    ).fetchall()
    con.close()
    assert {(f, r): n for f, r, n in warehouse_counts} == {
        s.values: s.population for s in in_place.strata
    }

    other = open_store(tmp_path / "wh.duckdb")
    plan = draw_from_results(other, WAREHOUSE_SPEC, str(counts_csv), str(rows_parquet), judge="j")
    assert sorted(plan.trace_ids) == sorted(in_place.trace_ids)
    assert {s.values: s.sample for s in plan.strata} == {
        s.values: s.sample for s in in_place.strata
    }
    stored = {r[0] for r in other.fetchall("SELECT trace_id FROM traces")}
    assert stored == set(plan.trace_ids)
    # the warehouse's judge_label counts: the drawn rows' became their verdicts, the rest
    # are recorded per stratum, and together they are the in-place frame's
    whole = merge_signatures(recorded_signatures(other, "wh"), drawn_signatures(other, "wh"))
    expected = merge_signatures(
        recorded_signatures(fresh_store, "wh"), drawn_signatures(fresh_store, "wh")
    )
    assert whole == expected
    assert sum(row[-1] for row in whole) == in_place.frame_size
    other.close()


@pytest.mark.parametrize(
    "dialect", ["duckdb", "spark", "bigquery", "snowflake", "trino", "postgres"]
)
def test_every_dialect_parses_back_with_the_same_hash_rule(dialect):
    import sqlglot

    from annotate.sampling.warehouse import HEX_SHA256, emit

    counts_sql, rows_sql = emit(WAREHOUSE_SPEC, "lake.traces", dialect, judge_label=True)
    for query in (counts_sql, rows_sql):
        tree = sqlglot.parse_one(query, read=dialect)
        assert tree.find(exp_table()).name == "traces"
    # the digest is the dialect's documented expression over the text "<seed>:<trace_id>"
    digest = sqlglot.parse_one(HEX_SHA256[dialect], read=dialect)
    outer = type(digest).__name__
    rows_tree = sqlglot.parse_one(rows_sql, read=dialect)
    hashes = [a.this for a in rows_tree.find_all(sqlglot.exp.Alias) if a.alias == "sample_hash"]
    assert len(hashes) == 1 and type(hashes[0]).__name__ == outer
    assert "'42:'" in rows_sql
    assert "sample_rank <= 40" in rows_sql


def exp_table():
    import sqlglot

    return sqlglot.exp.Table


@pytest.fixture(scope="module")
def spark():
    """One local Spark session for the module (starting one takes seconds), stopped after."""
    pytest.importorskip(
        "pyspark", reason="pyspark is not installed (optional: pip install -e '.[spark]' and a JRE)"
    )
    import shutil

    if shutil.which("java") is None:
        pytest.skip("no Java runtime: Spark cannot start (apt-get install openjdk-17-jre-headless)")
    from pyspark.sql import SparkSession

    # Tuned for a few hundred rows on a busy CI machine (about 10 s less than the defaults):
    # no web UI, one shuffle partition, no whole-stage code generation or adaptive plans,
    # and the JVM's quick compiler only.
    session = (
        SparkSession.builder.master("local[1]")
        .appName("annotate-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_spark_runs_the_emitted_sql(dataset, tmp_path, fresh_store, spark):
    """Spark itself (local mode) over the same rows returns the in-place draw's ids."""
    from annotate.sampling.warehouse import emit

    root, rows, _ = dataset
    in_place = draw_from_source(fresh_store, WAREHOUSE_SPEC, source_of(root))
    table = warehouse_table(rows).drop_columns(["judge", "context"])
    path = tmp_path / "wh.parquet"
    pq.write_table(table, path)
    spark.read.parquet(str(path)).createOrReplaceTempView("lake_traces")
    counts_sql, rows_sql = emit(WAREHOUSE_SPEC, "lake_traces", "spark", judge_label=False)
    drawn = spark.sql(rows_sql).collect()
    counts = {
        (r["feature"], r["risk_category"]): r["traces"] for r in spark.sql(counts_sql).collect()
    }
    assert counts == {s.values: s.population for s in in_place.strata}
    sizes = {s.values: s.sample for s in in_place.strata}
    kept = [
        r["trace_id"]
        for r in drawn
        if r["sample_rank"] <= sizes[(r["feature"], r["risk_category"])]
    ]
    assert sorted(kept) == sorted(in_place.trace_ids)


def test_jsonl_and_csv_sources_draw_as_their_import(tmp_path):
    """The same rows as JSON Lines and as CSV (context as a JSON cell): same ids as imported."""
    import csv

    rows = make_rows(300, seed=9)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {**r, "context": json.dumps(r["context"]), "judge": json.dumps(r["judge"])}
            )
    spec = SampleSpec(name="s", n=25, by=("feature", "risk_category"), seed=3)
    base = open_store(tmp_path / "base.duckdb")
    import_traces(base, jsonl)
    expected = draw_sample(base, spec)
    base.close()
    for path in (jsonl, table):
        store = open_store(tmp_path / f"{path.suffix[1:]}.duckdb")
        plan = draw_from_source(store, spec, make_source(str(path), None, {}))
        assert sorted(plan.trace_ids) == sorted(expected.trace_ids), path
        assert plan.frame_size == expected.frame_size
        assert store.scalar("SELECT count(*) FROM traces") == 25
        store.close()


def test_map_reads_a_field_from_another_column(tmp_path, fresh_store):
    rows = [{**r, "id": r.pop("trace_id")} for r in make_rows(60, seed=2)]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    spec = SampleSpec(name="m", n=10, by=("feature",), seed=3)
    plan = draw_from_source(fresh_store, spec, make_source(str(path), None, {"trace_id": "id"}))
    assert len(plan.trace_ids) == 10
    assert all(t.startswith("tr-") for t in plan.trace_ids)
    assert fresh_store.scalar("SELECT count(*) FROM traces") == 10


CONTEXTS = [
    ["doc"],
    [" \t\n"],
    [],
    [{"source": "kb", "text": "a fact"}],
    [{"source": "kb", "text": "\n\r "}],
    [{"source": "kb", "text": ""}, {"source": "kb", "text": "x"}],
]


@pytest.mark.parametrize("suffix", ["parquet", "jsonl"])
def test_judgeable_rule_matches_the_import(tmp_path, suffix):
    """Context as strings or {source, text} objects, blank with tabs and newlines: the frame in
    place holds exactly the traces an import would call judgeable."""
    rows = []
    for i in range(60):
        context = CONTEXTS[i % len(CONTEXTS)]
        rows.append({"trace_id": f"t{i}", "response": "r", "feature": "f", "context": context})
    path = tmp_path / f"t.{suffix}"
    # one file per shape family keeps each file's column type simple
    strings = [r for r in rows if not (r["context"] and isinstance(r["context"][0], dict))]
    objects = [r for r in rows if r not in strings]
    paths = []
    for name, part in (("strings", strings), ("objects", objects)):
        target = tmp_path / name / path.name
        target.parent.mkdir()
        if suffix == "parquet":
            pq.write_table(pa.Table.from_pylist(part), target)
        else:
            target.write_text("".join(json.dumps(r) + "\n" for r in part))
        paths.append(target)
    spec = SampleSpec(name="s", n=5, by=("feature",), seed=1)
    for target in paths:
        base = open_store(target.parent / "base.duckdb")
        import_traces(base, target)
        expected = base.scalar("SELECT count(*) FROM traces WHERE judgeable")
        base.close()
        store = open_store(target.parent / "place.duckdb")
        plan = draw_from_source(store, spec, make_source(str(target), None, {}))
        assert plan.frame_size == expected
        store.close()


def test_cli_emit_sql_then_record_from_results(dataset, tmp_path, cli):
    import duckdb

    root, rows, _ = dataset
    args = ("--n", "30", "--by", "feature", "--seed", "5")
    emitted = cli("sample", "--emit-sql", "duckdb", "--table", "lake_traces", *args, "--json")
    assert emitted.code == 0, emitted.err
    queries = emitted.json()
    assert queries["dialect"] == "duckdb" and queries["seed"] == 5
    con = duckdb.connect()
    lake_traces = warehouse_table(rows)  # noqa: F841 - read by name from the SQL
    counts_csv, rows_parquet = tmp_path / "c.csv", tmp_path / "r.parquet"
    con.execute(f"COPY ({queries['counts']}) TO '{counts_csv}' (HEADER)")
    con.execute(f"COPY ({queries['rows']}) TO '{rows_parquet}' (FORMAT parquet)")
    con.close()
    half = cli("sample", "--from-counts", str(counts_csv), "--name", "w", *args)
    assert half.code == 2 and "go together" in half.err
    planned = cli(
        "sample", "--from-counts", str(counts_csv), "--from-rows", str(rows_parquet),
        "--name", "w", *args, "--plan-only", "--json",
    )  # fmt: skip
    assert planned.code == 0 and "plan only, nothing stored" in planned.err
    nothing = cli("samples", "--json")  # the store this plan would have made is not left
    assert nothing.code == 2 and "no store at" in nothing.err
    done = cli(
        "sample", "--from-counts", str(counts_csv), "--from-rows", str(rows_parquet),
        "--name", "w", *args, "--json",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert planned.json()["trace_ids"] == done.json()["trace_ids"]
    in_place = cli(
        "sample", "--source", str(root / "traces" / "**" / "*.parquet"), "--name", "p", *args,
        "--json", db=tmp_path / "other.duckdb",
    )  # fmt: skip
    assert sorted(done.json()["trace_ids"]) == sorted(in_place.json()["trace_ids"])
    new = tmp_path / "planned.duckdb"  # a plan from files at a new --db leaves no store behind
    planned_in_place = cli(
        "sample", "--source", str(root / "traces" / "**" / "*.parquet"), "--name", "p", *args,
        "--plan-only", "--json", db=new,
    )  # fmt: skip
    assert planned_in_place.code == 0, planned_in_place.err
    assert planned_in_place.json()["strata"] == in_place.json()["strata"]
    assert not new.exists() and not new.with_name(new.name + ".wal").exists()
    again = cli("sample", "--name", "w", "--top-up", "5")
    assert again.code == 2 and "drawn by a warehouse" in again.err
    listed = cli("samples", "--json").json()["samples"]
    assert listed[0]["source"]["counts"] == str(counts_csv)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("counts missing", "none.csv does not exist or is not a file"),
        ("counts empty", "empty.csv is empty"),
        ("counts a folder", "does not exist or is not a file"),
        ("rows missing", "--from-rows {tmp}/none.parquet matches no file"),
        ("source missing", "--source {tmp}/nothing/*.parquet matches no file"),
        ("source without --n", "give the sample size with --n"),
    ],
)
def test_a_sample_whose_input_cannot_be_read_exits_2_and_creates_no_store(
    dataset, tmp_path, cli, case, message
):
    """Catches a typo in a file name leaving an empty store behind: a draw from files or a
    warehouse's results may create the store, so its inputs are checked before it is opened."""
    root, _, paths = dataset
    counts = tmp_path / "counts.csv"
    counts.write_text("feature,traces\nbilling_qa,30\n")
    (tmp_path / "empty.csv").write_text("")
    rows, source = str(paths[0]), str(root / "traces" / "**" / "*.parquet")
    args = {
        "counts missing": ["--from-counts", str(tmp_path / "none.csv"), "--from-rows", rows],
        "counts empty": ["--from-counts", str(tmp_path / "empty.csv"), "--from-rows", rows],
        "counts a folder": ["--from-counts", str(tmp_path), "--from-rows", rows],
        "rows missing": ["--from-counts", str(counts), "--from-rows", f"{tmp_path}/none.parquet"],
        "source missing": ["--source", f"{tmp_path}/nothing/*.parquet"],
        "source without --n": ["--source", source],
    }[case]
    size = [] if case == "source without --n" else ["--n", "5"]
    new = tmp_path / "new.duckdb"
    result = cli("sample", *args, "--name", "w", *size, "--by", "feature", db=new)
    assert result.code == 2 and not new.exists(), result.err
    assert message.format(tmp=tmp_path) in result.err


def test_cli_rates_of_a_source_sample_use_the_frames_judge_counts(dataset, cli, db_path):
    """The judge's verdicts on the traces left in the files count: the judge-only rate is the
    files' share; a slice by a column the strata do not hold says why it has none."""
    root, rows, _ = dataset
    store = open_store(db_path)
    draw_from_source(store, SPEC, source_of(root))
    store.close()
    result = cli("rates", "--sample", "lake", "--json", "--resamples", "50", "--by", "model")
    assert result.code == 0, result.err
    found = result.json()["rows"]
    raw = [r for r in found if r["estimator"] == "judge_raw" and r["level"] == "response"]
    judgeable = [r for r in rows if any(c.strip() for c in r["context"])]
    flagged = sum(r["judge"][0]["label"] == "unsupported" for r in judgeable)
    assert raw[0]["slice"] == {} and raw[0]["n"] == len(judgeable)
    assert raw[0]["rate"] == pytest.approx(flagged / len(judgeable), abs=1e-9)
    assert all(r["rate"] is None and "drawn where the traces live" in r["reason"] for r in raw[1:])


def test_bad_drawn_row_in_json_lines_is_reported_by_file_and_line(tmp_path, fresh_store):
    rows = make_rows(10, seed=4)
    rows[6]["timestamp"] = "yesterday"
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = SampleSpec(name="j", n=9, by=("feature",), seed=1, min_per_stratum=0)
    with pytest.raises(InputError) as caught:
        draw_from_source(fresh_store, spec, make_source(str(path), None, {}))
    assert f"{path}, line 7: timestamp:" in str(caught.value)
    assert fresh_store.scalar("SELECT count(*) FROM traces") == 0
