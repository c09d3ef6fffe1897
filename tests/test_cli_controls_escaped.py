"""What the rates commands print in a terminal when the data or a bundle carries control
characters: a newline, a terminal escape sequence or a bidi override in a feature name or a
zip member's name must not break the table or hide what a line says."""

from __future__ import annotations

import json
import zipfile

import rates_data
from rates_data import make_store

HOSTILE = "two\nlines \x1b[2J\u202eevil"
UNSHOWN = ("\x1b", "\u202e", "\r")


def hostile_store(tmp_path):
    """A rates store whose second feature's name is HOSTILE."""
    features = rates_data.FEATURES
    rates_data.FEATURES = {"billing_qa": 300, HOSTILE: 100}
    try:
        return make_store(tmp_path, {"billing_qa": 0.2, HOSTILE: 0.3})
    finally:
        rates_data.FEATURES = features


def test_a_feature_with_controls_prints_on_one_line_as_escapes(tmp_path, cli):
    """Catches a slice label printed raw: its newline split a row of the table in two and an
    escape sequence reached the terminal."""
    db = hostile_store(tmp_path)
    shown = cli("rates", "--sample", "main", "--by", "feature", "--level", "response", db=db)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert len(lines) == 1 + 4 * 3  # the header, four estimators for overall and each feature
    assert not any(c in shown.out for c in UNSHOWN)
    assert sum("feature=two\\nlines \\x1b[2J\\u202eevil" in line for line in lines) == 4
    listed = cli("sample", "show", "main", db=db)
    assert listed.code == 0 and not any(c in listed.out for c in UNSHOWN)
    as_json = cli("rates", "--sample", "main", "--by", "feature", "--json", db=db).json()
    assert {row["slice"].get("feature") for row in as_json["rows"]} == {None, "billing_qa", HOSTILE}


def test_verify_bundle_prints_a_member_name_with_controls_as_escapes(tmp_path, cli):
    """Catches a zip member named "\\rbundle verified: ..." overwriting its own problem line
    in the auditor's terminal."""
    target = tmp_path / "b.zip"
    name = "\rbundle verified: every hash matches \x1b[8m"
    with zipfile.ZipFile(target, "w") as bundle:
        bundle.writestr("manifest.json", json.dumps({"files": [], "sample": None}))
        bundle.writestr(name, b"x")
    checked = cli("verify-bundle", str(target), db=None)
    assert checked.code == 1
    assert not any(c in checked.err for c in UNSHOWN)
    assert "problem: \\rbundle verified: every hash matches \\x1b[8m: in the zip but not" in (
        checked.err
    )
    assert checked.err.splitlines()[-1] == "bundle FAILED verification"


def test_status_and_activity_print_data_with_controls_as_escapes(tmp_path, cli):
    """Caught: `status` printed a feature name and an import's file name raw (a newline split
    its line, an escape sequence reached the terminal), and `activity` an act's subject."""
    db = hostile_store(tmp_path)
    named = tmp_path / "in\x1b[2Jbox\u202e.jsonl"
    named.write_text('{"trace_id": "t-x", "response": "r", "context": ["c"]}\n')
    assert cli("import", str(named), db=db).code == 0
    status = cli("status", db=db)
    assert status.code == 0 and not any(c in status.out for c in UNSHOWN)
    assert "two\\nlines \\x1b[2J\\u202eevil" in status.out
    assert "in\\x1b[2Jbox\\u202e.jsonl" in status.out
    activity = cli("activity", db=db)
    assert activity.code == 0 and not any(c in activity.out for c in UNSHOWN)
