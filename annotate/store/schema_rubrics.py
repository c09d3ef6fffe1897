"""Migration 0007_rubrics: rubric versions' content, our judge's runs, verdict details,
failures, batch items, the held-out split and calibrated marks; and 0023_llm_call_scope: the
sample and rubric version each LLM call was for (its spend is totalled by them; judge calls
made before it get theirs from their run). Read by schema.py only."""

from __future__ import annotations

import json

DEFAULT_INSTRUCTIONS = (
    "Judge each claim against the context only: your own knowledge does not count. A claim "
    "is supported when the context states it or directly entails it. Numbers, dates and names "
    "must match exactly. Quote the sentence of the context your verdict rests on."
)
DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"


def _default_rubric_spec(error_types: tuple[str, ...]) -> str:
    """Extends version 1 (0002_default_rubric) with what a judge needs; its labels are kept."""
    spec = {
        "error_types": list(error_types),
        "instructions": DEFAULT_INSTRUCTIONS,
        "few_shot": [],
        "model": DEFAULT_JUDGE_MODEL,
        "settings": {"max_tokens": 1024},
        "granularity": "claim",
    }
    escaped = json.dumps(spec).replace("'", "''")
    return f"UPDATE rubrics SET spec = '{escaped}' WHERE version = 1 AND spec IS NULL;"


_TABLES = """
ALTER TABLE rubrics ADD COLUMN spec JSON;            -- instructions, error types, few-shot, model...
ALTER TABLE rubrics ADD COLUMN parent INTEGER;       -- the version it was edited from
ALTER TABLE rubrics ADD COLUMN note VARCHAR;         -- why this version exists
ALTER TABLE rubrics ADD COLUMN content_hash VARCHAR; -- of labels + spec: an import finds its twin
ALTER TABLE judge_verdicts ADD COLUMN run_id INTEGER;
ALTER TABLE judge_verdicts ADD COLUMN rubric_version INTEGER;
ALTER TABLE judge_verdicts ADD COLUMN model VARCHAR;
ALTER TABLE judge_verdicts ADD COLUMN error_type VARCHAR;
ALTER TABLE judge_verdicts ADD COLUMN evidence VARCHAR;
ALTER TABLE judge_verdicts ADD COLUMN quote_found BOOLEAN;  -- FALSE: the quote is not in the context
ALTER TABLE judge_verdicts ADD COLUMN llm_call_id BIGINT;
ALTER TABLE llm_calls ADD COLUMN attempts INTEGER;
ALTER TABLE llm_calls ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE llm_calls ADD COLUMN cache_write_tokens INTEGER;
ALTER TABLE llm_calls ADD COLUMN batch_id VARCHAR;
CREATE SEQUENCE judge_run_ids START 1;
CREATE TABLE judge_runs (
    id INTEGER PRIMARY KEY DEFAULT nextval('judge_run_ids'),
    judge VARCHAR NOT NULL,           -- rubric-v{version}:{model}, the name calibration reads
    rubric_version INTEGER NOT NULL,
    model VARCHAR NOT NULL,
    sample VARCHAR NOT NULL,
    mode VARCHAR NOT NULL,            -- sync | batch | baseline
    status VARCHAR NOT NULL,          -- running | done | failed | cancelled | submitted
    claims INTEGER NOT NULL,
    judged INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    batch_id VARCHAR,
    estimate JSON,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    created_by VARCHAR NOT NULL
);
CREATE TABLE judge_failures (          -- a call that left a claim without a verdict
    run_id INTEGER NOT NULL,
    judge VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    error VARCHAR NOT NULL,
    llm_call_id BIGINT,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE judge_batch_items (       -- custom_id -> the claims one batch request judges
    run_id INTEGER NOT NULL,
    custom_id VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL
);
CREATE TABLE rubric_splits (           -- tuning | held_out, drawn once per sample, seeded
    sample VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    part VARCHAR NOT NULL CHECK (part IN ('tuning', 'held_out')),
    seed BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE SEQUENCE rubric_calibration_ids START 1;
CREATE TABLE rubric_calibrations (     -- a version marked calibrated for some slices
    id INTEGER PRIMARY KEY DEFAULT nextval('rubric_calibration_ids'),
    rubric_version INTEGER NOT NULL,
    judge VARCHAR NOT NULL,
    sample VARCHAR NOT NULL,
    fingerprint VARCHAR NOT NULL,
    slices JSON NOT NULL,
    card JSON NOT NULL,
    marked_by VARCHAR NOT NULL,
    marked_at TIMESTAMP NOT NULL
);
CREATE INDEX verdicts_judge ON judge_verdicts (judge);
"""


def rubrics_migration(error_types: tuple[str, ...]) -> str:
    """0007_rubrics: the judge's tables, and version 1 extended with a judge's settings."""
    return _TABLES + _default_rubric_spec(error_types)


LLM_CALL_SCOPE = """
ALTER TABLE llm_calls ADD COLUMN sample VARCHAR;          -- the sample the call worked on
ALTER TABLE llm_calls ADD COLUMN rubric_version INTEGER;  -- the judge's version, or the revised one
UPDATE llm_calls SET sample = runs.sample, rubric_version = runs.rubric_version
FROM (
    SELECT DISTINCT calls.id, r.sample, r.rubric_version
    FROM (
        SELECT llm_call_id AS id, run_id FROM judge_verdicts WHERE llm_call_id IS NOT NULL
        UNION
        SELECT llm_call_id AS id, run_id FROM judge_failures WHERE llm_call_id IS NOT NULL
    ) calls JOIN judge_runs r ON r.id = calls.run_id
) runs
WHERE llm_calls.id = runs.id;
"""
