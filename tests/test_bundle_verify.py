"""verify-bundle as an auditor meets it: slices by a trace attribute, explanations worded by
another version of annotate, files removed with their manifest entries, a renamed sample."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from rates_data import make_store
from test_rates_exports import forge

from annotate.rates.bundle import build_bundle, verify_bundle
from annotate.store import open_store


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("verify")
    # 24 sampled traces: some slices hold too few for a number, and their rows say why
    db = make_store(folder, {"billing_qa": 0.2, "hr_policy": 0.3}, sample_n=24, attributes=True)
    store = open_store(db)
    try:
        build_bundle(
            store, "main", folder / "b.zip", by=("feature", "retriever"), judge="prod-judge",
            resamples=100,
        )  # fmt: skip
    finally:
        store.close()
    return folder / "b.zip"


def test_a_bundle_sliced_by_a_trace_attribute_verifies(bundle):
    """Catches `cannot slice by 'retriever'` (exit 2): the check's fresh store had the traces
    but not the list of attribute keys each import records."""
    result = verify_bundle(bundle)
    assert result["ok"], result["problems"]
    rows = json.loads(zipfile.ZipFile(bundle).read("rates.json"))["rows"]
    assert {r["slice"].get("retriever") for r in rows} == {None, "bm25", "dense"}
    assert result["rows"] == len(rows) and result["notes"] == []


def _reworded(data: bytes) -> bytes:
    document = json.loads(data)
    if "rows" in document:
        for row in document["rows"]:
            if row.get("reason"):
                row["reason"] = "worded otherwise by another version"
    if "readiness" in document:
        document["readiness"]["verdict"] = "worded otherwise by another version"
    return (json.dumps(document, indent=1) + "\n").encode()


@pytest.mark.parametrize("name", ["rates.json", "calibration.json"])
def test_explanations_worded_differently_pass_with_a_note(bundle, tmp_path, name):
    """Catches every archived bundle failing as "changed after export" once a message's
    wording changed in a later version ("1 units" became "1 unit")."""
    before = zipfile.ZipFile(bundle).read(name)
    forge(bundle, tmp_path / "w.zip", name, _reworded)
    assert zipfile.ZipFile(tmp_path / "w.zip").read(name) != before  # something was reworded
    result = verify_bundle(tmp_path / "w.zip")
    assert result["ok"], result["problems"]
    assert [n.split(":")[0] for n in result["notes"]] == [name]
    assert "the same figures" in result["notes"][0] and "made by 0.1.0" in result["notes"][0]


def test_a_changed_state_or_figure_beside_the_wording_still_fails(bundle, tmp_path):
    def ready(data: bytes) -> bytes:
        document = json.loads(_reworded(data))
        document["readiness"]["ready"] = not document["readiness"]["ready"]
        return json.dumps(document).encode()

    forge(bundle, tmp_path / "r.zip", "calibration.json", ready)
    result = verify_bundle(tmp_path / "r.zip")
    assert result["problems"] == [
        "calibration.json: readiness.ready of judge prod-judge is true in the file, false from "
        "the bundle's tables"
    ]


def _without(source: Path, target: Path, name: str) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        manifest = json.loads(old.read("manifest.json"))
        manifest["files"] = [f for f in manifest["files"] if f["path"] != name]
        for item in old.namelist():
            if item == "manifest.json":
                new.writestr(item, json.dumps(manifest))
            elif item != name:
                new.writestr(item, old.read(item))


@pytest.mark.parametrize("name", ["agreement.json", "calibration.json", "frame.json", "sample.csv"])
def test_a_readable_file_removed_with_its_manifest_entry_fails(bundle, tmp_path, name):
    """Catches a bundle passing without agreement.json (and the others made from the tables):
    only rates.json and the tables were required."""
    _without(bundle, tmp_path / "c.zip", name)
    result = verify_bundle(tmp_path / "c.zip")
    assert result["problems"] == [f"{name}: missing from the bundle and its manifest"]


def test_a_manifest_naming_another_sample_fails(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as old, zipfile.ZipFile(tmp_path / "s.zip", "w") as new:
        for item in old.namelist():
            data = old.read(item)
            if item == "manifest.json":
                manifest = json.loads(data)
                manifest["sample"] = "another"
                data = json.dumps(manifest).encode()
            new.writestr(item, data)
    result = verify_bundle(tmp_path / "s.zip")
    assert result["problems"] == [
        "manifest.json: names sample 'another', but rates.json was made from 'main'"
    ]
