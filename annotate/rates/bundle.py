"""The auditor bundle: one zip an auditor can re-derive every rate from, and its check.

Inside: manifest.json (every file with its SHA-256, the app version, when, who), frame.json
(the sampling frame summary), sample.csv (traces, strata, inclusion probabilities, weights),
tables/*.parquet (the sample, its strata and draws, the frame's traces and claims without
their text, the sample's claims with it, every label event and adjudication, rubric
versions, judge verdicts and the judge label mapping), agreement.json and calibration.json,
rates.json with the parameters it was computed with, and settings.json with every setting
those numbers depend on. `verify_bundle` checks every hash, loads the tables and the settings
into an empty in-memory store and recomputes every number with the same code: they must be
equal, and a number that is not is named with both its values.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotate import __version__
from annotate.accounts.activity import Actor, as_actor
from annotate.agreement.calibration import calibration
from annotate.agreement.reliability import agreement
from annotate.errors import AnnotateError
from annotate.rates.bundle_check import compare_files, compare_rows, params_problem
from annotate.rates.bundle_settings import SETTINGS, apply_settings, bundle_settings
from annotate.rates.bundle_zip import MANIFEST, READABLE, read_bundle
from annotate.rates.estimate import rate_rows
from annotate.rates.exports import neutralise, record_export, sha256
from annotate.rates.inputs import load_inputs
from annotate.ratings.document import ratings_document
from annotate.sampling.samples import known_sample
from annotate.store import Store, open_store
from annotate.store import rates as sql
from annotate.store.samples import sample_units, stored_strata


def _parquet(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _json(document: Any) -> bytes:
    return (json.dumps(document, ensure_ascii=False, indent=1, default=str) + "\n").encode()


def _sample_csv(store: Store, sample: str) -> bytes:
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(["trace_id", "stratum", "draw", "inclusion_probability", "weight"])
    for unit in sample_units(store, sample):
        out.writerow(
            [neutralise(unit["trace_id"]), neutralise(unit["stratum_key"]), unit["draw"],
             repr(unit["inclusion_probability"]), repr(unit["weight"])]
        )  # fmt: skip
    return buffer.getvalue().encode()


def frame_summary(store: Store, sample: str) -> dict[str, Any]:
    row = known_sample(store, sample)
    strata = [
        {"stratum": list(key), "population": population, "sample_size": size,
         "inclusion_probability": size / population if population else None}
        for key, population, size, _ in stored_strata(store, sample)
    ]  # fmt: skip
    return {**row, "strata": strata}


def _reports(
    store: Store, sample: str, judge: str | None, resamples: int, seed: int
) -> dict[str, bytes]:
    found: dict[str, Any] = {}
    for name, make in (
        ("agreement.json", lambda: agreement(store, sample, seed=seed, repetitions=resamples)),
        (
            "calibration.json",
            lambda: (
                calibration(store, judge, sample, seed=seed, repetitions=resamples)
                if judge
                else None
            ),
        ),
        ("ratings.json", lambda: ratings_document(store, sample, seed, resamples)),
    ):
        try:
            found[name] = make() or {"reason": "no judge verdicts in the store"}
        except AnnotateError as exc:  # reported in the bundle, not a failed export
            found[name] = {"reason": str(exc)}
    return {name: _json(doc) for name, doc in found.items()}


def _derived_files(store: Store, params: dict[str, Any]) -> dict[str, bytes]:
    """The readable files of a bundle, made again from its tables as the export made them:
    a frame, sample list or report edited after export (and its hash in the manifest with
    it) no longer matches."""
    sample = params["sample"]
    files = {
        "frame.json": _json(frame_summary(store, sample)),
        "sample.csv": _sample_csv(store, sample),
    }
    files.update(_reports(store, sample, params["judge"], params["resamples"], params["seed"]))
    return files


def bundle_bytes(
    store: Store,
    sample: str,
    by: Sequence[str] = ("feature", "risk_category"),
    judge: str | None = None,
    threshold: float = 0.10,
    resamples: int = 1000,
    seed: int = 0,
    actor: Actor | str | None = None,
) -> tuple[bytes, int]:
    """The bundle zip's bytes and the number of rates in it (nothing recorded)."""
    who = as_actor(actor)
    files: dict[str, bytes] = {"frame.json": _json(frame_summary(store, sample))}
    files["sample.csv"] = _sample_csv(store, sample)
    files[SETTINGS] = _json(bundle_settings(store))
    for table in sql.BUNDLE_TABLES:
        files[f"tables/{table}.parquet"] = _parquet(sql.bundle_table(store, table, sample))
    inputs = load_inputs(store, sample, by, judge)
    levels = ["claim", "response"]
    params = {"sample": sample, "by": list(by), "levels": levels,
              "judge": inputs.judge, "threshold": threshold, "resamples": resamples, "seed": seed}  # fmt: skip
    rows = rate_rows(inputs, by, levels, threshold=threshold, resamples=resamples, seed=seed)
    files["rates.json"] = _json({"params": params, "rows": rows})
    files.update(_reports(store, sample, inputs.judge, resamples, seed))
    manifest = {
        "app": "annotate",
        "app_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "created_by": who.name,
        "sample": sample,
        "files": [
            {"path": p, "sha256": sha256(d), "bytes": len(d)} for p, d in sorted(files.items())
        ],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(MANIFEST, _json(manifest))
        for name, data in sorted(files.items()):
            bundle.writestr(name, data)
    return buffer.getvalue(), len(rows)


def build_bundle(
    store: Store,
    sample: str,
    path: str | Path,
    by: Sequence[str] = ("feature", "risk_category"),
    judge: str | None = None,
    threshold: float = 0.10,
    resamples: int = 1000,
    seed: int = 0,
    actor: Actor | str | None = None,
) -> dict[str, Any]:
    """Write the bundle zip; the export is recorded with the zip's hash."""
    data, rows = bundle_bytes(store, sample, by, judge, threshold, resamples, seed, actor)
    Path(path).write_bytes(data)
    digest = record_export(store, as_actor(actor), "bundle", data, path=str(path), sample=sample)
    return {
        "path": str(path),
        "sha256": digest,
        "files": len(zipfile.ZipFile(io.BytesIO(data)).namelist()),
        "rows": rows,
    }


BUNDLE_FILES = frozenset({*READABLE, SETTINGS, *(f"tables/{t}.parquet" for t in sql.BUNDLE_TABLES)})


def verify_bundle(path: str | Path) -> dict[str, Any]:
    """Check every file's hash against the manifest, then recompute the rates from the tables."""
    manifest, contents, problems = read_bundle(path, BUNDLE_FILES)
    listed = {f["path"] for f in manifest["files"]}
    required = ("rates.json", *(f"tables/{t}.parquet" for t in sql.BUNDLE_TABLES))
    problems += [
        f"{n}: missing from the bundle and its manifest" for n in required if n not in listed
    ]
    made_from = _sample_of(contents)
    if manifest.get("sample") != made_from:
        problems.append(
            f"{MANIFEST}: names sample {manifest.get('sample')!r}, but rates.json was made "
            f"from {made_from!r}"
        )
    notes: list[str] = []
    recomputed = _recompute(contents, problems, notes, manifest) if not problems else None
    return {
        "ok": not problems, "problems": problems, "notes": notes, "manifest": manifest,
        "rows": recomputed,
    }  # fmt: skip


def _sample_of(contents: dict[str, bytes]) -> Any:
    try:
        return json.loads(contents["rates.json"])["params"]["sample"]
    except (KeyError, ValueError, TypeError):
        return None


def _load_tables(store: Store, contents: dict[str, bytes], problems: list[str]) -> bool:
    """Load the bundle's tables into the empty store; a table that is no Parquet, holds a
    column the store's table has not (its name would be written into SQL) or rows that do
    not fit is a problem."""
    tables = {}
    for table in sql.BUNDLE_TABLES:
        name = f"tables/{table}.parquet"
        try:
            data = pq.read_table(io.BytesIO(contents[name]))
        except (pa.ArrowException, OSError) as exc:
            problems.append(f"{name}: not a readable Parquet table ({exc})")
            continue
        columns = set(sql.bundle_table(store, table, "").column_names)
        unknown = [c for c in data.column_names if c not in columns]
        if unknown:
            problems.append(f"{name}: holds columns that table {table} has not: {unknown}")
        else:
            tables[table] = data
    for table, data in tables.items() if not problems else ():
        try:
            with store.transaction():
                sql.load_bundle_table(store, table, data)
        except AnnotateError as exc:
            problems.append(f"tables/{table}.parquet: its rows do not fit table {table} ({exc})")
    return not problems


def _recompute(
    contents: dict[str, bytes], problems: list[str], notes: list[str], manifest: dict[str, Any]
) -> int | None:
    stored = json.loads(contents["rates.json"])
    wrong = params_problem(stored)
    if wrong:
        problems.append(wrong)
        return None
    params = stored["params"]
    store = open_store(":memory:")
    try:
        if not _load_tables(store, contents, problems):
            return None
        if not apply_settings(store, contents.get(SETTINGS), problems):
            return None
        try:
            inputs = load_inputs(store, params["sample"], params["by"], params["judge"])
            rows = rate_rows(
                inputs, params["by"], params["levels"], threshold=params["threshold"],
                resamples=params["resamples"], seed=params["seed"],
            )  # fmt: skip
            derived = _derived_files(store, params)
        except AnnotateError as exc:
            problems.append(
                f"rates.json: its rates cannot be made from the bundle's tables ({exc})"
            )
            return None
    finally:
        store.close()
    version = manifest.get("app_version")
    compare_files(derived, contents, problems, notes, version)
    again = json.loads(json.dumps(rows, default=str))
    compare_rows(again, stored["rows"], problems, notes, version)
    return len(again)
