"""A bundle carries every setting its numbers depend on (settings.json): an untouched bundle
verifies after a lead changed thresholds and mappings, and a number that differs is named
with its value in the file and the one the bundle's tables give."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from rates_data import make_store
from test_bundle_verify import _without
from test_rates_exports import forge

from annotate.rates.bundle import verify_bundle
from annotate.rates.bundle_check import named

TABLES = "from the bundle's tables"


@pytest.fixture(scope="module")
def lead_bundle(tmp_path_factory) -> Path:
    """A bundle made after a lead saved readiness thresholds, the least shared units and a
    judge label mapping, all through the CLI."""
    from annotate.cli.main import main

    folder = tmp_path_factory.mktemp("settings")
    db = ["--db", str(make_store(folder, {"billing_qa": 0.2, "hr_policy": 0.3}, judge_agrees=0.8))]
    judge = ["--judge", "prod-judge"]
    assert main(["calibration", *db, *judge, "--sample", "main", "--min-kappa", "0.5"]) == 0
    assert main(["agreement", *db, "--sample", "main", "--min-shared-units", "7"]) == 0
    assert main(["judge-labels", *db, *judge, "--set", "supported=abstained"]) == 0
    out = ["--out", str(folder / "b.zip"), "--resamples", "50"]
    assert main(["bundle", *db, "--sample", "main", *judge, *out]) == 0
    return folder / "b.zip"


def test_an_untouched_bundle_verifies_after_thresholds_and_mappings_changed(lead_bundle, cli):
    """Catches "calibration.json: differs from what the bundle's tables give (changed after
    export)" on a bundle nobody touched: the saved thresholds never reached the recompute."""
    verified = cli("verify-bundle", str(lead_bundle), db=None)
    assert verified.code == 0, verified.err
    assert "bundle verified: every hash matches" in verified.err
    settings = json.loads(zipfile.ZipFile(lead_bundle).read("settings.json"))
    assert settings["readiness_thresholds"]["cohen_kappa"] == 0.5
    assert settings["min_shared_units"] == 7
    assert settings["judge_labels"] == {
        "prod-judge": {"supported": "abstained", "unsupported": "unsupported"}
    }


def _edited(change):  # type: ignore[no-untyped-def]
    return lambda data: (json.dumps(change(json.loads(data)), indent=1) + "\n").encode()


def test_a_changed_number_fails_naming_it_and_both_values(lead_bundle, tmp_path):
    """Catches a changed sensitivity reported only as "differs ... (changed after export)"
    though every hash matched: the auditor could not tell which number or by how much."""
    exported = json.loads(zipfile.ZipFile(lead_bundle).read("calibration.json"))
    tables = exported["sensitivity"]["value"]

    def change(document: dict) -> dict:
        document["sensitivity"]["value"] = 0.812
        return document

    forge(lead_bundle, tmp_path / "c.zip", "calibration.json", _edited(change))
    assert verify_bundle(tmp_path / "c.zip")["problems"] == [
        f"calibration.json: sensitivity of judge prod-judge is 0.812 in the file, {tables:.3f} "
        f"{TABLES}"
    ]


def test_a_changed_rate_names_its_row(lead_bundle, tmp_path):
    rows = json.loads(zipfile.ZipFile(lead_bundle).read("rates.json"))["rows"]
    was = rows[0]["rate"]

    def change(document: dict) -> dict:
        document["rows"][0]["rate"] = 0.9
        return document

    forge(lead_bundle, tmp_path / "r.zip", "rates.json", _edited(change))
    assert verify_bundle(tmp_path / "r.zip")["problems"] == [
        f"rates.json: the recomputed rates differ from the exported ones in 1 of {len(rows)} "
        f"rows: row 1 (all; claim; weighted_human): rate is 0.900 in the file, {was:.3f} {TABLES}"
    ]


def test_close_numbers_are_shown_with_the_decimals_that_tell_them_apart():
    assert named([("rate", 0.2251, 0.2252)]) == (f"rate is 0.2251 in the file, 0.2252 {TABLES}")


def test_settings_changed_with_their_hash_fail_naming_the_number_they_move(lead_bundle, tmp_path):
    def change(document: dict) -> dict:
        document["readiness_thresholds"]["cohen_kappa"] = 0.25
        return document

    forge(lead_bundle, tmp_path / "s.zip", "settings.json", _edited(change))
    assert verify_bundle(tmp_path / "s.zip")["problems"] == [
        f"calibration.json: readiness.checks[1].threshold of judge prod-judge is 0.500 in the "
        f"file, 0.250 {TABLES}; thresholds.cohen_kappa of judge prod-judge is 0.500 in the "
        f"file, 0.250 {TABLES}"
    ]


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("readiness_thresholds", {"cohen_kappa": 7},
         "threshold for cohen_kappa must be between -1 and 1, got 7"),
        ("readiness_thresholds", {"cohen_kappa": "high"},
         "not a statistic -> number or null table: {'cohen_kappa': 'high'}"),
        ("min_shared_units", 0, "the minimum of shared units must be 1 or more, got 0"),
        ("judge_labels", {"prod-judge": {"supported": "maybe"}},
         "not a judge -> {label: supported | unsupported | abstained | null} table"),
        ("judge_labels", {"prod-judge": {"supported": "supported"}},
         "judge 'prod-judge' label 'supported' is supported here, abstained in "
         "tables/judge_label_map.parquet"),
    ],
)  # fmt: skip
def test_a_setting_annotate_never_saves_is_named(lead_bundle, tmp_path, key, value, says):
    forge(
        lead_bundle, tmp_path / "v.zip", "settings.json",
        _edited(lambda document: {**document, key: value}),
    )  # fmt: skip
    assert verify_bundle(tmp_path / "v.zip")["problems"] == [f"settings.json: {key}: {says}"]


def test_a_bundle_made_before_settings_json_is_checked_with_the_defaults(tmp_path):
    from annotate.rates.bundle import build_bundle
    from annotate.store import open_store

    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}))
    try:
        build_bundle(store, "main", tmp_path / "b.zip", judge="prod-judge", resamples=50)
    finally:
        store.close()
    _without(tmp_path / "b.zip", tmp_path / "old.zip", "settings.json")
    result = verify_bundle(tmp_path / "old.zip")
    assert result["ok"], result["problems"]
