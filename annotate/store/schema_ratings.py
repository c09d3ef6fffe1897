"""Migrations 0020_ratings (reviewers' and judges' ratings of whole responses on a rubric's
ordinal criteria) and 0021_default_criteria (relevance and coherence, 1-5, in version 1).
Read by schema.py only."""

from __future__ import annotations

import json

RATINGS = """
CREATE SEQUENCE rating_event_ids START 1;
CREATE TABLE rating_events (          -- append-only: a (trace, reviewer, criterion)'s rating is its latest
    event_id BIGINT PRIMARY KEY DEFAULT nextval('rating_event_ids'),
    trace_id VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    score INTEGER,                    -- NULL: skipped (an optional criterion)
    rubric_version INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    origin VARCHAR NOT NULL,          -- app | import
    import_id INTEGER
);
CREATE TABLE judge_ratings (          -- a judge's score of a response on one criterion
    trace_id VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    score DOUBLE NOT NULL,
    explanation VARCHAR,
    origin VARCHAR NOT NULL,          -- import | run
    import_id INTEGER,
    run_id INTEGER,
    rubric_version INTEGER,
    model VARCHAR,
    llm_call_id BIGINT,
    created_at TIMESTAMP NOT NULL
);
"""

_LEVELS = {
    "relevance": (
        "Does the response address what the user asked?",
        [
            "off topic: answers another question or none",
            "mostly off topic: touches the question but misses its point",
            "partly relevant: answers part of the question, or with much that was not asked",
            "relevant with small gaps or digressions",
            "fully relevant: answers exactly what was asked",
        ],
    ),
    "coherence": (
        "Is the response well organised, consistent and easy to follow?",
        [
            "incoherent: contradicts itself or cannot be followed",
            "poorly organised: jumps between points, hard to follow",
            "understandable with effort: some disorder or repetition",
            "clear, with minor lapses in order or flow",
            "clear and logically ordered throughout",
        ],
    ),
}
DEFAULT_CRITERIA = [
    {
        "name": name,
        "question": question,
        "levels": [{"score": i + 1, "definition": text} for i, text in enumerate(levels)],
        "optional": False,
    }
    for name, (question, levels) in _LEVELS.items()
]
# off: our judge does not rate them; with_claims: in the claims' call; separate: a call of its own
DEFAULT_CRITERIA_CALL = "off"


def default_criteria_migration() -> str:
    """Version 1 carries the default criteria (its content hash now covers them)."""
    patch = json.dumps({"criteria": DEFAULT_CRITERIA, "criteria_call": DEFAULT_CRITERIA_CALL})
    escaped = patch.replace("'", "''")
    return (
        f"UPDATE rubrics SET spec = json_merge_patch(spec, '{escaped}') "
        "WHERE version = 1 AND spec IS NOT NULL;"
    )
