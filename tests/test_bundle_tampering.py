"""verify-bundle against an attacker: every bundle below was changed after export (most with
their hashes in the manifest changed too) and must fail, naming what is wrong, without running
anything the bundle holds and without an unexpected error. Plus the bundle's rates re-derived
independently (pandas, statsmodels) from its own tables."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rates_data
from rates_data import make_store
from statsmodels.stats.proportion import proportion_confint

from annotate.rates import bundle_zip
from annotate.rates.bundle import build_bundle, verify_bundle
from annotate.rates.exports import sha256
from annotate.store import open_store


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("qa_bundle")
    db = make_store(
        folder, {"billing_qa": 0.2, "hr_policy": 0.3}, judge_agrees=0.8, attributes=True
    )
    store = open_store(db)
    try:
        build_bundle(store, "main", folder / "b.zip", by=("feature", "retriever"), resamples=100)
    finally:
        store.close()
    assert verify_bundle(folder / "b.zip")["ok"]
    return folder / "b.zip"


def rewrite(
    source: Path,
    target: Path,
    files: dict[str, bytes | None],
    manifest: Callable[[dict], None] | None = None,
) -> Path:
    """`files` replaced (None: removed) or added, the manifest's hashes and sizes made to
    match them, then `manifest` applied to it."""
    with zipfile.ZipFile(source) as old:
        contents = {n: old.read(n) for n in old.namelist() if n != "manifest.json"}
        document = json.loads(old.read("manifest.json"))
    for name, data in files.items():
        if data is None:
            contents.pop(name)
        else:
            contents[name] = data
    document["files"] = [
        {"path": n, "sha256": sha256(d), "bytes": len(d)} for n, d in sorted(contents.items())
    ]
    if manifest:
        manifest(document)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        new.writestr("manifest.json", json.dumps(document))
        for name, data in contents.items():
            new.writestr(name, data)
    return target


def rates_with(bundle: Path, change: Callable[[dict], None]) -> bytes:
    document = json.loads(zipfile.ZipFile(bundle).read("rates.json"))
    change(document)
    return json.dumps(document, indent=1).encode()


def failed(path: Path) -> list[str]:
    result = verify_bundle(path)
    assert not result["ok"] and result["problems"]
    return result["problems"]


@pytest.mark.parametrize("name", ["README-auditor.txt", "../outside.txt", "tables/extra.parquet"])
def test_a_file_no_bundle_holds_fails_even_listed_with_its_hash(bundle, tmp_path, name):
    """Catches an added file (a `../` path too) passing as verified once the manifest listed
    it with its hash: nothing checked its content."""
    forged = rewrite(bundle, tmp_path / "x.zip", {name: b"the rates are fine"})
    assert failed(forged) == [
        f"{name}: not a file of an annotate bundle (nothing checks its content)"
    ]


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_name_held_twice_in_the_zip_fails(bundle, tmp_path):
    """Catches a second sample.csv placed before the real one passing: the check read one
    copy, an auditor's unzip tool may show the other."""
    target = tmp_path / "twice.zip"
    with zipfile.ZipFile(bundle) as old, zipfile.ZipFile(target, "w") as new:
        new.writestr("sample.csv", b"trace_id\nforged\n")
        for name in old.namelist():
            new.writestr(name, old.read(name))
    assert "sample.csv: held 2 times in the zip (a reader may get either copy)" in failed(target)


def test_a_member_too_large_is_named_not_read(bundle, tmp_path, monkeypatch):
    """Catches a zip bomb: a member inflating to gigabytes was read whole into memory."""
    huge = b"\0" * 5000
    forged = rewrite(bundle, tmp_path / "big.zip", {"agreement.json": huge})
    monkeypatch.setattr(bundle_zip, "MAX_MEMBER_BYTES", 4000)
    read: list[str] = []
    original = zipfile.ZipFile.read
    monkeypatch.setattr(
        zipfile.ZipFile, "read", lambda self, name: read.append(name) or original(self, name)
    )
    problems = failed(forged)
    assert "agreement.json: holds 5,000 bytes, more than the check reads (4,000)" in problems
    assert "agreement.json" not in read


def test_a_member_whose_size_differs_from_the_manifest_is_not_read(bundle, tmp_path):
    forged = rewrite(
        bundle, tmp_path / "size.zip", {},
        lambda m: [f.update(bytes=3) for f in m["files"] if f["path"] == "frame.json"],
    )  # fmt: skip
    (problem,) = failed(forged)
    assert problem.startswith("frame.json: SHA-256 differs from the manifest")
    assert problem.endswith("bytes, the manifest says 3")


def test_a_parquet_column_name_never_reaches_sql(bundle, tmp_path):
    """Catches SQL injection: a table's column names were written into the INSERT that loads
    it, so a crafted bundle made verify-bundle write a file of the attacker's choosing (and
    still pass)."""
    written = tmp_path / "written.csv"
    evil = f"event_id) SELECT 1 WHERE false; COPY (SELECT 42 AS x) TO '{written}'; --"
    buffer = io.BytesIO()
    pq.write_table(pa.table({evil: pa.array([1], pa.int64())}), buffer)
    forged = rewrite(
        bundle, tmp_path / "sql.zip", {"tables/adjudications.parquet": buffer.getvalue()}
    )
    problems = failed(forged)
    assert not written.exists()
    assert problems == [
        f"tables/adjudications.parquet: holds columns that table adjudications has not: {[evil]}"
    ]


def test_a_table_that_is_not_parquet_is_named(bundle, tmp_path):
    forged = rewrite(bundle, tmp_path / "t.zip", {"tables/claims.parquet": b"PAR1 not really"})
    (problem,) = failed(forged)
    assert problem.startswith("tables/claims.parquet: not a readable Parquet table")


def test_a_manifest_entry_without_its_hash_is_named(bundle, tmp_path):
    forged = rewrite(bundle, tmp_path / "h.zip", {}, lambda m: m["files"][0].pop("sha256"))
    assert failed(forged) == ["agreement.json: its manifest entry has no SHA-256"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("seed", "x"), ("seed", -1), ("resamples", 0), ("levels", None), ("threshold", "high"),
     ("by", "feature")],
)  # fmt: skip
def test_params_annotate_never_writes_fail_naming_them(bundle, tmp_path, key, value):
    """Catches a bundle whose rates.json params were edited (hash too) crashing the check
    with an unexpected error (exit 4) instead of failing it."""

    def change(document: dict) -> None:
        if value is None:
            document["params"].pop(key)
        else:
            document["params"][key] = value

    forged = rewrite(bundle, tmp_path / "p.zip", {"rates.json": rates_with(bundle, change)})
    assert failed(forged) == [
        f"rates.json: params.{key}: missing, or a value annotate never computes rates with"
    ]


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [("judge", "nobody", "no verdicts from judge 'nobody'"), ("by", ["nope"], "cannot slice by")],
)
def test_params_the_tables_cannot_serve_fail_the_bundle(bundle, tmp_path, key, value, says):
    """Catches such a bundle ending as a usage error (exit 2) rather than failing (exit 1)."""
    change = lambda document: document["params"].__setitem__(key, value)  # noqa: E731
    forged = rewrite(bundle, tmp_path / "p.zip", {"rates.json": rates_with(bundle, change)})
    (problem,) = failed(forged)
    assert problem.startswith("rates.json: its rates cannot be made from the bundle's tables")
    assert says in problem


def test_dropped_rows_say_how_many_each_side_holds(bundle, tmp_path):
    """Catches "differ ... in 0 of 39 rows (or in their number: 40)"; the hashes match, so
    nothing says the file was changed after export: the numbers say what differs."""
    change = lambda document: document.__setitem__("rows", document["rows"][:-1])  # noqa: E731
    forged = rewrite(bundle, tmp_path / "r.zip", {"rates.json": rates_with(bundle, change)})
    count = len(json.loads(zipfile.ZipFile(bundle).read("rates.json"))["rows"])
    assert failed(forged) == [
        f"rates.json: holds {count - 1} rows, the bundle's tables give {count}"
    ]


def test_a_flag_added_to_a_reviewer_fails(bundle, tmp_path):
    """Catches flags compared as wording: a reviewer flagged (or a flag removed) passed."""
    document = json.loads(zipfile.ZipFile(bundle).read("agreement.json"))
    assert document["per_reviewer"] and document["per_reviewer"][0]["flags"] == []
    document["per_reviewer"][0]["flags"] = ["labels much faster than the others"]
    forged = rewrite(bundle, tmp_path / "f.zip", {"agreement.json": json.dumps(document).encode()})
    assert failed(forged) == [
        "agreement.json: per_reviewer[rita].flags raised is 1 in the file, 0 from the bundle's "
        "tables"
    ]


def test_slice_values_of_an_attribute_named_like_an_explanation_are_compared(tmp_path):
    """Catches a slice column called `reason` (or note, flags, verdict) dropped from the
    comparison: its slices' rates could be swapped and the bundle passed with a note."""
    write = rates_data.write_traces

    def with_reason(path, judge_rates, seed=1, attributes=False):  # type: ignore[no-untyped-def]
        write(path, judge_rates, seed, attributes)
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for index, line in enumerate(lines):
            line["attributes"] = {"reason": "a" if index % 2 else "b"}
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    rates_data.write_traces = with_reason
    try:
        db = make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3})
    finally:
        rates_data.write_traces = write
    store = open_store(db)
    try:
        build_bundle(store, "main", tmp_path / "b.zip", by=("reason",), resamples=100)
    finally:
        store.close()

    def swap(document: dict) -> None:
        for row in document["rows"]:
            if row["slice"]:
                row["slice"]["reason"] = {"a": "b", "b": "a"}[row["slice"]["reason"]]

    forged = rewrite(
        tmp_path / "b.zip", tmp_path / "s.zip", {"rates.json": rates_with(tmp_path / "b.zip", swap)}
    )
    (problem,) = failed(forged)
    assert problem.startswith("rates.json: the recomputed rates differ from the exported ones")


def in_slice(frame: pd.DataFrame, values: dict) -> pd.DataFrame:
    keep = pd.Series(True, index=frame.index)
    for column, value in values.items():
        keep &= frame[column] == value
    return frame[keep]


def test_the_bundle_rates_re_derive_from_its_own_tables(bundle):
    """An auditor's own computation from the bundle's files (pandas and statsmodels, none of
    annotate's code): the weighted human rates (ratio of N_h / m_h weighted unsupported claims)
    and the raw judge rates equal the exported ones, each interval at least Wilson's."""
    archive = zipfile.ZipFile(bundle)

    def table(name: str) -> pd.DataFrame:
        return pq.read_table(io.BytesIO(archive.read(f"tables/{name}.parquet"))).to_pandas()

    rates = json.loads(archive.read("rates.json"))
    traces, units, strata = table("traces"), table("sample_units"), table("sample_strata")
    traces["retriever"] = traces["attributes"].map(lambda a: json.loads(a)["retriever"])
    events = table("label_events").sort_values("event_id")
    latest = events.groupby(["trace_id", "claim_index", "reviewer"]).tail(1)
    agreed = latest.groupby(["trace_id", "claim_index"])["label"].agg(
        lambda s: s.iloc[0] if s.nunique() == 1 else None
    )
    gold = (agreed.dropna() != "supported").rename("unsupported").reset_index()
    gold = gold.merge(units[["trace_id", "stratum_key"]]).merge(
        traces[["trace_id", "feature", "retriever"]]
    )
    population = dict(zip(strata["stratum_key"], strata["population"], strict=True))
    verdicts = table("judge_verdicts").merge(traces[["trace_id", "feature", "retriever"]])
    checked = 0
    for row in rates["rows"]:
        if row["estimator"] == "weighted_human" and row["rate"] is not None:
            part = in_slice(gold, row["slice"])
            labelled = part.groupby("stratum_key")["trace_id"].nunique()
            weight = part["stratum_key"].map(population) / part["stratum_key"].map(labelled)
            rate = (weight * part["unsupported"]).sum() / weight.sum()
            assert (row["n"], row["rate"]) == (len(part), pytest.approx(rate, abs=1e-9))
            low, high = proportion_confint(rate * len(part), len(part), method="wilson")
            assert row["low"] <= low + 1e-9 and row["high"] >= high - 1e-9  # never narrower
            checked += 1
        if row["estimator"] == "judge_raw":
            part = in_slice(verdicts, row["slice"])
            unsupported = int((part["label"] == "unsupported").sum())
            low, high = proportion_confint(unsupported, len(part), method="wilson")
            assert row["n"] == len(part)
            assert row["rate"] == pytest.approx(unsupported / len(part), abs=1e-9)
            # a bootstrap of traces (claims of one trace move together): never narrower
            assert row["low"] <= low + 1e-9 and row["high"] >= high - 1e-9
            checked += 1
    assert checked == 20
