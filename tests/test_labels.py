"""`annotate import-labels`: appended as events, rubric-checked by line, external reviewers."""

from __future__ import annotations

from conftest import FIXTURES

GOOD = FIXTURES / "generic" / "production.jsonl"


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def events(store):
    return store.fetchall(
        "SELECT trace_id, claim_index, reviewer, label, error_type, note, origin "
        "FROM label_events ORDER BY event_id"
    )


def test_labels_are_appended_and_unknown_reviewers_become_external(cli, tmp_path, fresh_store):
    cli("import", str(GOOD))
    path = write(
        tmp_path,
        "labels.jsonl",
        [
            '{"trace_id": "t-1", "claim": 0, "reviewer": "alice", "label": "supported"}',
            '{"trace_id": "t-1", "claim": 1, "reviewer": "alice", "label": "not_in_context", '
            '"error_type": "number", "note": "5 days is not in the KB", "created_at": "2026-03-02T10:00:00Z"}',
        ],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 0 and result.json()["imported"] == 2
    assert events(fresh_store) == [
        ("t-1", 0, "alice", "supported", None, None, "import"),
        ("t-1", 1, "alice", "not_in_context", "number", "5 days is not in the KB", "import"),
    ]
    assert fresh_store.fetchall("SELECT name, role, password_hash, external FROM users") == [
        ("alice", "reviewer", None, True)
    ]


def test_a_later_label_never_replaces_an_earlier_one(cli, tmp_path, fresh_store):
    cli("import", str(GOOD))
    first = write(
        tmp_path,
        "a.jsonl",
        ['{"trace_id": "t-1", "claim": 0, "reviewer": "bob", "label": "supported"}'],
    )
    second = write(
        tmp_path,
        "b.jsonl",
        ['{"trace_id": "t-1", "claim": 0, "reviewer": "bob", "label": "contradicted"}'],
    )
    cli("import-labels", first)
    cli("import-labels", second)
    again = cli("import-labels", first, "--json").json()
    assert (again["imported"], again["duplicates"]) == (0, 1)
    assert [row[3] for row in events(fresh_store)] == ["supported", "contradicted"]


def test_bad_label_rows_are_rejected_by_line_and_good_ones_kept(cli, tmp_path, fresh_store):
    cli("import", str(GOOD))
    path = write(
        tmp_path,
        "labels.jsonl",
        [
            '{"trace_id": "t-1", "claim": 0, "reviewer": "carol", "label": "supported"}',
            '{"trace_id": "t-1", "claim": 0, "reviewer": "carol", "label": "hallucinated"}',
            '{"trace_id": "nope", "claim": 0, "reviewer": "carol", "label": "supported"}',
            '{"trace_id": "t-1", "claim": 9, "reviewer": "carol", "label": "supported"}',
            '{"trace_id": "t-2", "claim": 0, "reviewer": "carol", "label": "supported"}',
            '{"trace_id": "t-1", "claim": "first", "reviewer": "", "label": "supported", "error_type": "typo"}',
        ],
    )
    result = cli("import-labels", path, "--json")
    assert result.code == 1  # in file order (the store checks of lines 3-5 run after line 6's)
    assert [(e["line"], e["field"], e["message"]) for e in result.json()["errors"]] == [
        (
            2,
            "label",
            "'hallucinated' is not in the active rubric; use one of: supported, "
            "partially_supported, contradicted, not_in_context, not_a_claim",
        ),
        (3, "trace_id", "'nope' is not in the store; import the trace before its labels"),
        (4, "claim", "trace 't-1' has 2 claims (indexes 0 to 1), so claim 9 does not exist"),
        (5, "claim", "trace 't-2' has no claims yet; create its claims first"),
        (6, "reviewer", "is required and must be a non-empty string, got an empty string"),
        (6, "claim", "must be the claim's index in its trace (an integer >= 0), got 'first'"),
        (
            6,
            "error_type",
            "'typo' is not an error type; use one of: entity, number, temporal, "
            "relation, negation, overgeneralization, causal, attribution, fabricated_detail, other",
        ),
    ]
    assert events(fresh_store) == [("t-1", 0, "carol", "supported", None, None, "import")]
