"""Exports: golden bytes of each rates format, formula cells neutralised, every export recorded;
OTel evaluation records that our own OTLP import reads back; the auditor bundle recomputes
its rates exactly and a tampered bundle fails."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES
from rates_data import make_store

from annotate.accounts.activity import activity
from annotate.rates.bundle import build_bundle, verify_bundle
from annotate.rates.exports import export_bytes, neutralise, sha256, write_export
from annotate.store import open_store
from annotate.store.assignments import judge_names

GOLDEN = FIXTURES / "rates"
ROWS = [
    {"slice": {}, "level": "response", "estimator": "weighted_human", "n": 120, "rate": 0.125,
     "low": 0.07, "high": 0.19, "method": "ratio estimator; BCa bootstrap", "state": "warning"},
    {"slice": {"feature": "=HYPERLINK(\"http://x\")"}, "level": "claim", "estimator": "judge_raw",
     "n": 3, "rate": None, "low": None, "high": None, "method": "-1+2", "state": "no number",
     "reason": "@too little data", "judge": "j"},
]  # fmt: skip


def golden(name: str, data: bytes) -> bytes:
    """The stored golden bytes; ANNOTATE_UPDATE_GOLDEN=1 rewrites them (review the diff)."""
    path = GOLDEN / name
    if os.environ.get("ANNOTATE_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    return path.read_bytes()


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_export_bytes_match_the_golden_file(fmt):
    data = export_bytes(ROWS, fmt)
    assert data == golden(f"rates.{fmt}", data)


def test_parquet_export_holds_the_same_records_as_the_golden_csv():
    table = pq.read_table(io.BytesIO(export_bytes(ROWS, "parquet")))
    assert table.column_names == [
        "slice",
        "level",
        "estimator",
        "n",
        "rate",
        "low",
        "high",
        "method",
        "state",
        "reason",
    ]
    records = table.to_pylist()
    assert records[0]["rate"] == 0.125 and records[1]["rate"] is None
    assert records[1]["slice"] == '{"feature": "=HYPERLINK(\\"http://x\\")"}'
    assert (
        golden("rates.parquet.json", (json.dumps(records, indent=1) + "\n").encode())
        == (json.dumps(records, indent=1) + "\n").encode()
    )


def test_csv_cells_a_spreadsheet_would_run_are_neutralised():
    text = export_bytes(ROWS, "csv").decode()
    assert "'-1+2" in text and "'@too little data" in text
    assert all(neutralise(v).startswith("'") for v in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx"))
    assert neutralise(-0.5) == -0.5 and neutralise("0.5") == "0.5"


def test_every_export_is_recorded_with_who_and_the_hash(tmp_path):
    store = open_store(tmp_path / "a.duckdb")
    try:
        digest = write_export(store, ROWS, "csv", tmp_path / "r.csv", actor="lena", sample="main")
        acts = activity(store, kind="export")
        assert [(a["actor"], a["subject"], a["detail"]["sha256"]) for a in acts] == [
            ("lena", "rates.csv", digest)
        ]
        assert digest == sha256((tmp_path / "r.csv").read_bytes())
    finally:
        store.close()


@pytest.fixture(scope="module")
def labelled_store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("bundle"), {"billing_qa": 0.2, "hr_policy": 0.3})


def test_the_bundle_recomputes_its_rates_exactly_and_lists_every_file(labelled_store, tmp_path):
    store = open_store(labelled_store)
    try:
        made = build_bundle(store, "main", tmp_path / "b.zip", resamples=200, actor="lena")
        assert [a["subject"] for a in activity(store, kind="export")][-1] == "bundle"
    finally:
        store.close()
    result = verify_bundle(tmp_path / "b.zip")
    assert result["ok"], result["problems"]
    assert result["rows"] == made["rows"] > 0
    names = {f["path"] for f in result["manifest"]["files"]}
    for required in ("frame.json", "sample.csv", "rates.json", "agreement.json", "calibration.json",
                     "settings.json",
                     "tables/label_events.parquet", "tables/adjudications.parquet",
                     "tables/rubrics.parquet", "tables/judge_verdicts.parquet"):  # fmt: skip
        assert required in names
    assert result["manifest"]["created_by"] == "lena"


def rewrite(source: Path, target: Path, name: str, change) -> None:  # type: ignore[no-untyped-def]
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.namelist():
            data = old.read(item)
            new.writestr(item, change(data) if item == name else data)


def test_a_tampered_bundle_fails_verification(labelled_store, tmp_path):
    store = open_store(labelled_store)
    try:
        build_bundle(store, "main", tmp_path / "b.zip", resamples=200)
    finally:
        store.close()
    flipped = tmp_path / "flipped.zip"  # one rate changed, the manifest left alone
    rewrite(
        tmp_path / "b.zip",
        flipped,
        "rates.json",
        lambda d: d.replace(b'"rate": 0.', b'"rate": 0.0', 1),
    )
    result = verify_bundle(flipped)
    assert not result["ok"] and "rates.json: SHA-256 differs" in result["problems"][0]


def test_a_bundle_whose_hashes_were_forged_still_fails_on_the_recomputation(
    labelled_store, tmp_path
):
    store = open_store(labelled_store)
    try:
        build_bundle(store, "main", tmp_path / "b.zip", resamples=200)
    finally:
        store.close()
    forged = tmp_path / "forged.zip"
    with zipfile.ZipFile(tmp_path / "b.zip") as old:
        rates = json.loads(old.read("rates.json"))
        rates["rows"][0]["rate"] = 0.001
        new_rates = (json.dumps(rates, indent=1) + "\n").encode()
        manifest = json.loads(old.read("manifest.json"))
        for entry in manifest["files"]:
            if entry["path"] == "rates.json":
                entry["sha256"] = sha256(new_rates)
        with zipfile.ZipFile(forged, "w") as new:
            for item in old.namelist():
                data = {
                    "rates.json": new_rates,
                    "manifest.json": json.dumps(manifest).encode(),
                }.get(item)
                new.writestr(item, data if data is not None else old.read(item))
    result = verify_bundle(forged)
    assert not result["ok"] and "recomputed rates differ" in result["problems"][0]


def forge(source: Path, target: Path, name: str, change) -> None:  # type: ignore[no-untyped-def]
    """`name` changed and its hash in the manifest changed with it: only a check of the
    readable files against the tables can tell."""
    with zipfile.ZipFile(source) as old:
        data = change(old.read(name))
        manifest = json.loads(old.read("manifest.json"))
        for entry in manifest["files"]:
            if entry["path"] == name:
                entry["sha256"], entry["bytes"] = sha256(data), len(data)
        with zipfile.ZipFile(target, "w") as new:
            for item in old.namelist():
                replaced = {name: data, "manifest.json": json.dumps(manifest).encode()}.get(item)
                new.writestr(item, replaced if replaced is not None else old.read(item))


def test_readable_files_edited_with_their_hashes_fail_against_the_tables(
    labelled_store, tmp_path, cli
):
    """Catches a bundle whose frame.json, sample.csv or calibration.json was edited and its
    manifest hash updated: only the parquet tables fed the recomputation, so it passed."""
    store = open_store(labelled_store)
    try:
        build_bundle(store, "main", tmp_path / "b.zip", resamples=100, judge="prod-judge")
    finally:
        store.close()
    edits = {
        "frame.json": lambda d: d.replace(b'"population": ', b'"population": 1', 1),
        "sample.csv": lambda d: d.replace(b",1,", b",2,", 1),
        "calibration.json": lambda d: d.replace(b'"method": "Wilson"', b'"method": "exact"', 1),
    }
    tables = "from the bundle's tables"
    says = {
        "frame.json": f"strata[billing_qa].population is 1300 in the file, 300 {tables}",
        "sample.csv": 'line 2 is \'billing_qa-0240,"[""billing_qa""]",2,0.2,5.0\' in the '
        f'file, \'billing_qa-0240,"[""billing_qa""]",1,0.2,5.0\' {tables}',
        "calibration.json": f'sensitivity.method of judge prod-judge is "exact" in the file, '
        f'"Wilson" {tables}',
    }
    for name, change in edits.items():
        target = tmp_path / f"forged-{name}.zip"
        forge(tmp_path / "b.zip", target, name, change)
        with zipfile.ZipFile(target) as check:
            assert check.read(name) != zipfile.ZipFile(tmp_path / "b.zip").read(name), name
        result = verify_bundle(target)
        assert not result["ok"], name
        assert result["problems"] == [f"{name}: {says[name]}"]
    damaged = tmp_path / "damaged.zip"
    rewrite(tmp_path / "b.zip", damaged, "manifest.json", lambda d: d[:40])
    refused = cli("verify-bundle", str(damaged), db=None)
    assert refused.code == 2 and "is not a bundle manifest (JSONDecodeError" in refused.err


def test_verify_bundle_command_exit_codes(labelled_store, tmp_path, cli):
    made = cli(
        "bundle",
        "--sample",
        "main",
        "--out",
        str(tmp_path / "b.zip"),
        "--resamples",
        "100",
        db=labelled_store,
    )
    assert made.code == 0, made.err
    assert cli("verify-bundle", str(tmp_path / "b.zip"), db=None).code == 0
    rewrite(tmp_path / "b.zip", tmp_path / "t.zip", "sample.csv", lambda d: d + b"x,1,1,1,1\n")
    bad = cli("verify-bundle", str(tmp_path / "t.zip"), db=None)
    assert bad.code == 1 and "sample.csv: SHA-256 differs" in bad.err


def test_otel_records_re_import_through_our_otlp_import(tmp_path, cli):
    source = FIXTURES / "otlp" / "rag_export.jsonl"
    db = tmp_path / "otel.duckdb"
    assert cli("import", str(source), db=db).code in (0, 1)
    assert (
        cli("sample", "--name", "s", "--n", "3", "--by", "feature", "--seed", "1", db=db).code == 0
    )
    assert cli("claims", "--sample", "s", "--extractor", "sentences", db=db).code == 0
    store = open_store(db)
    claims = store.fetchall("SELECT trace_id, claim_index FROM claims ORDER BY ALL")
    store.close()
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(
        json.dumps({"trace_id": t, "claim": i, "reviewer": "rita", "label": "contradicted" if i == 0 else "supported"}) + "\n"
        for t, i in claims
    ))  # fmt: skip
    assert cli("import-labels", str(labels), db=db).code == 0
    out = tmp_path / "evaluations.jsonl"
    exported = cli("export-otel", "--sample", "s", "--out", str(out), "--json", db=db)
    assert exported.code == 0, exported.err
    records = exported.json()["records"]
    assert records > 0 and exported.json()["unlinked"] == 0
    again = cli("export-otel", "--sample", "s", "--out", str(out), db=db)  # appended, not rewritten
    assert again.code == 0 and len(out.read_text().splitlines()) == 2 * records
    line = json.loads(out.read_text().splitlines()[0])
    record = line["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    keys = {a["key"] for a in record["attributes"]}
    assert {
        "gen_ai.evaluation.name",
        "gen_ai.evaluation.score.label",
        "gen_ai.evaluation.explanation",
        "annotate.reviewer",
    } <= keys
    fresh = tmp_path / "fresh.duckdb"  # the same spans, then the evaluations file
    cli("import", str(source), db=fresh)
    shutil.copy(out, tmp_path / "only-once.jsonl")
    lines = out.read_text().splitlines()[:records]
    (tmp_path / "only-once.jsonl").write_text("\n".join(lines) + "\n")
    imported = cli(
        "import", str(tmp_path / "only-once.jsonl"), "--format", "otlp", "--json", db=fresh
    )
    report = imported.json()
    humans = sum('"annotate.human_review"' in line for line in lines)
    assert 0 < humans < records  # the judge's records and the reviewers' gold
    # the judge's records attach as its verdicts; our own human verdicts are refused
    assert (report["attached"], report["rejected"]) == (records - humans, humans), report
    store = open_store(fresh)
    try:
        assert "annotate.human_review" not in judge_names(store)
    finally:
        store.close()


def test_a_bundle_without_a_table_fails_verification(labelled_store, tmp_path):
    store = open_store(labelled_store)
    try:
        build_bundle(store, "main", tmp_path / "b.zip", resamples=100)
    finally:
        store.close()
    with (
        zipfile.ZipFile(tmp_path / "b.zip") as old,
        zipfile.ZipFile(tmp_path / "c.zip", "w") as new,
    ):
        manifest = json.loads(old.read("manifest.json"))
        manifest["files"] = [
            f for f in manifest["files"] if f["path"] != "tables/label_events.parquet"
        ]
        for item in old.namelist():
            if item == "manifest.json":
                new.writestr(item, json.dumps(manifest))
            elif item != "tables/label_events.parquet":
                new.writestr(item, old.read(item))
    result = verify_bundle(tmp_path / "c.zip")
    assert result["problems"] == [
        "tables/label_events.parquet: missing from the bundle and its manifest"
    ]


def test_sample_show_as_csv_is_a_recorded_export(labelled_store, cli):
    shown = cli("sample", "show", "main", "--csv", "--as", "rita", db=labelled_store)
    assert shown.code == 2  # rita is an external reviewer from imported labels: no account
    shown = cli("sample", "show", "main", "--csv", db=labelled_store)
    assert shown.code == 0, shown.err
    store = open_store(labelled_store)
    try:
        acts = activity(store, kind="export")
        assert acts[-1]["subject"] == "sample.csv"
        assert acts[-1]["detail"]["sha256"] == sha256(shown.out.encode())
    finally:
        store.close()
