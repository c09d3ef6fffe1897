"""`annotate import-labels` edges: reviewer names found as sign-in finds them, and rows of one
file that contradict each other."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

import annotate.ingest.labels as label_import
from annotate.accounts.users import add_user
from annotate.store import open_store
from annotate.store.labels import add_external_reviewers

GOOD = FIXTURES / "generic" / "production.jsonl"
PASSWORD = "a long passphrase"
DEACTIVATED = "'bob' is a deactivated account: its labels are not taken"


def write(tmp_path, rows):
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return str(path)


def row(reviewer, label, claim=0, **more):
    return {"trace_id": "t-1", "claim": claim, "reviewer": reviewer, "label": label, **more}


def setup(cli, db_path, *accounts):
    assert cli("import", str(GOOD)).code == 0
    store = open_store(db_path)
    try:
        for name in accounts:
            add_user(store, name, "reviewer", PASSWORD)
    finally:
        store.close()


def stored(db_path):
    store = open_store(db_path)
    try:
        events = store.fetchall(
            "SELECT claim_index, reviewer, label FROM label_events ORDER BY event_id"
        )
        users = store.fetchall("SELECT name, active, external FROM users ORDER BY name")
    finally:
        store.close()
    return events, users


def errors(result):
    return [(e["line"], e["field"], e["message"]) for e in result.json()["errors"]]


@pytest.fixture
def one_row_batches(monkeypatch):
    """Every row its own batch: what holds within a batch must hold across batches."""
    monkeypatch.setattr(label_import, "BATCH_SIZE", 1)


@pytest.mark.parametrize("batches", ["one batch", "one row a batch"])
def test_a_reviewer_is_found_as_sign_in_finds_the_name(cli, db_path, tmp_path, request, batches):
    """Catches labels from `Bob` or a fullwidth `ｂob` passing a deactivated bob's refusal as
    new external reviewers, and `ALICE` becoming a second reviewer beside alice."""
    if batches == "one row a batch":
        request.getfixturevalue("one_row_batches")
    setup(cli, db_path, "bob", "alice")
    assert cli("user", "deactivate", "bob").code == 0
    path = write(
        tmp_path,
        [
            row("Bob", "contradicted"),
            row("\uff42ob", "contradicted"),
            row("ALICE", "supported"),
            row("bob", "supported"),
            row("\uff21lice", "contradicted", claim=1),
        ],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 1
    assert (result.json()["imported"], result.json()["rejected"]) == (2, 3)
    assert errors(result) == [
        (1, "reviewer", DEACTIVATED),
        (2, "reviewer", DEACTIVATED),
        (4, "reviewer", DEACTIVATED),
    ]
    events, users = stored(db_path)
    assert events == [(0, "alice", "supported"), (1, "alice", "contradicted")]
    assert users == [("alice", True, False), ("bob", False, False)]  # no new reviewer


@pytest.mark.parametrize("batches", ["one batch", "one row a batch"])
def test_two_spellings_of_a_new_name_become_one_external_reviewer(
    cli, db_path, tmp_path, request, batches
):
    """Catches `ｄave` and `DAVE` in one file becoming two reviewers, and a new name kept in
    a spelling (fullwidth) that `user add` would have normalised."""
    if batches == "one row a batch":
        request.getfixturevalue("one_row_batches")
    setup(cli, db_path)
    path = write(
        tmp_path,
        [row("\uff44ave", "supported"), row("DAVE", "contradicted", claim=1)],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 0 and result.json()["imported"] == 2
    events, users = stored(db_path)
    assert events == [(0, "dave", "supported"), (1, "dave", "contradicted")]
    assert users == [("dave", True, True)]
    again = cli("import-labels", write(tmp_path, [row("Dave", "supported", claim=1)]), "--json")
    assert again.code == 0 and stored(db_path)[1] == [("dave", True, True)]
    assert stored(db_path)[0][-1] == (1, "dave", "supported")


def test_a_name_that_could_be_either_of_two_older_twin_accounts_is_refused(cli, db_path, tmp_path):
    """Catches a third `BOB` made beside twins `Bob` and `bob` left by earlier imports."""
    setup(cli, db_path)
    store = open_store(db_path)
    try:
        add_external_reviewers(store, ["Bob", "bob"])
    finally:
        store.close()
    result = cli("import-labels", write(tmp_path, [row("BOB", "supported")]), "--json")
    assert result.code == 1 and result.json()["rejected"] == 1
    assert errors(result) == [
        (
            1,
            "reviewer",
            "'BOB' could be any of the accounts 'Bob', 'bob', which differ only in case or in "
            "how a character is written; write the account's exact name",
        )
    ]
    assert stored(db_path) == ([], [("Bob", True, True), ("bob", True, True)])


def conflict(line, other):
    return (
        line,
        "label",
        f"'zed' labels claim 1 of trace 't-1' differently on line {other} of this file with "
        "the same created_at (or none), so neither is the later verdict: none of them was "
        "kept. Keep the row meant, or give each row its own created_at",
    )


@pytest.mark.parametrize("batches", ["one batch", "one row a batch"])
def test_contradicting_rows_of_one_file_are_conflicts_and_neither_is_kept(
    cli, db_path, tmp_path, request, batches
):
    """Catches both rows stored at the same created_at, the current one chosen by insert
    order, with `conflicts 0` and exit 0."""
    if batches == "one row a batch":
        request.getfixturevalue("one_row_batches")
    setup(cli, db_path)
    path = write(
        tmp_path,
        [
            row("zed", "supported", claim=1),
            row("amy", "supported"),
            row("zed", "contradicted", claim=1),
            row("ZED", "supported", claim=1),  # an exact repeat of line 1: a duplicate
        ],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 1
    counts = result.json()
    assert [counts[k] for k in ("imported", "rejected", "duplicates", "conflicts")] == [1, 0, 1, 2]
    assert errors(result) == [conflict(1, 3), conflict(3, 1)]
    events, users = stored(db_path)
    assert events == [(0, "amy", "supported")]
    assert users == [("amy", True, True)]  # zed keeps no label: no account made
    again = cli("import-labels", path, "--json")  # still a conflict, never half-imported
    assert again.code == 1 and again.json()["conflicts"] == 2 and again.json()["duplicates"] == 2
    assert stored(db_path)[0] == events


def test_conflicts_with_the_same_created_at_given(cli, db_path, tmp_path):
    setup(cli, db_path)
    at = "2026-03-02T10:00:00Z"
    path = write(
        tmp_path,
        [
            row("zed", "supported", claim=1, created_at=at),
            row("zed", "supported", claim=1, created_at=at, note="checked"),
        ],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 1 and result.json()["conflicts"] == 2
    assert errors(result) == [conflict(1, 2), conflict(2, 1)]
    assert stored(db_path) == ([], [])


def test_an_identical_repeat_in_one_file_is_a_duplicate_not_a_conflict(cli, db_path, tmp_path):
    setup(cli, db_path)
    path = write(tmp_path, [row("zed", "supported"), row("zed", "supported")])
    result = cli("import-labels", path, "--json")
    assert result.code == 0
    assert (result.json()["imported"], result.json()["duplicates"]) == (1, 1)
    assert result.json()["conflicts"] == 0
    assert stored(db_path)[0] == [(0, "zed", "supported")]


def test_verdicts_with_different_created_at_are_kept_the_latest_current(cli, db_path, tmp_path):
    """A reviewer who changed their mind: both kept, appended in time order (not file order),
    so the later verdict is the current one."""
    setup(cli, db_path)
    path = write(
        tmp_path,
        [
            row("zed", "contradicted", claim=1, created_at="2026-03-02T11:00:00Z"),
            row("amy", "supported"),
            row("zed", "supported", claim=1, created_at="2026-03-02T10:00:00Z"),
        ],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 0 and result.json()["imported"] == 3
    assert stored(db_path)[0] == [
        (1, "zed", "supported"),
        (1, "zed", "contradicted"),
        (0, "amy", "supported"),
    ]
