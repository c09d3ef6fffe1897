"""Migrations 0010_claim_versions (a lead's new versions of flagged claims), 0011_questions
(reviewers' questions to the leads, with their answers), 0013_attribute_names (the attribute
keys the traces carry), 0014_fewer_indexes and 0015_judge_reveals (when a reviewer
was shown the judge on a trace) and 0016_login_tries (where wrong passwords came from). Read by schema.py only."""

from __future__ import annotations

CLAIM_VERSIONS = """
CREATE TABLE retired_claims (         -- claim versions a lead replaced; `claims` holds the current ones
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,     -- never reused: a new version gets a new index
    text VARCHAR NOT NULL,
    start_offset INTEGER,
    end_offset INTEGER,
    origin VARCHAR NOT NULL,
    action VARCHAR NOT NULL,          -- split | merge | correct
    replaced_by JSON NOT NULL,        -- the claim indexes of the new version
    retired_by VARCHAR NOT NULL,
    retired_at TIMESTAMP NOT NULL
);
"""

QUESTIONS = """
CREATE SEQUENCE question_ids START 1;
CREATE SEQUENCE question_answer_ids START 1;
CREATE TABLE questions (              -- a reviewer's question to the leads about one claim
    id BIGINT PRIMARY KEY DEFAULT nextval('question_ids'),
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    sample VARCHAR,                   -- the sample the reviewer was labelling
    reviewer VARCHAR NOT NULL,
    question VARCHAR NOT NULL,
    asked_at TIMESTAMP NOT NULL
);
CREATE TABLE question_answers (       -- append-only: the current answer is the latest row
    id BIGINT PRIMARY KEY DEFAULT nextval('question_answer_ids'),
    question_id BIGINT NOT NULL,
    answer VARCHAR NOT NULL,
    answered_by VARCHAR NOT NULL,
    answered_at TIMESTAMP NOT NULL
);
"""

# The pages offer every attribute key as a slice or stratum; finding them in the traces is a scan
# of every trace's JSON (0.3-0.5 s at 1M), so each import records the keys it brings.
ATTRIBUTE_NAMES = """
CREATE TABLE trace_attribute_names (  -- every key of any trace's attributes, once
    name VARCHAR NOT NULL
);
INSERT INTO trace_attribute_names
SELECT DISTINCT unnest(json_keys(attributes)) FROM traces WHERE attributes IS NOT NULL;
"""

# The trace-id indexes of the big per-trace tables, and the judge-name one, cost more than
# they give. An import had to merge them at its commit, where DuckDB cannot spill: a
# 1,000,000-trace import peaked at 587-630 MB with them, 490 MB without. Looking one trace up
# without them, in a 1,000,000-trace store (2.5M contexts and verdicts): median 1.1-1.7 ms
# instead of 0.6-1.0 ms (a scan of one column); joins never used them. traces keeps its
# primary key, the one that checks something.
FEWER_INDEXES = """
DROP INDEX IF EXISTS contexts_trace;
DROP INDEX IF EXISTS claims_trace;
DROP INDEX IF EXISTS verdicts_trace;
DROP INDEX IF EXISTS verdicts_judge;
"""

# Once a reviewer has seen the judge's verdict on a trace, their labels on it are final for
# gold: `last_event` is their latest label event on the trace at the reveal
# (annotate.labelling.blind).
JUDGE_REVEALS = """
CREATE TABLE judge_reveals (
    reviewer VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    revealed_at TIMESTAMP NOT NULL,
    last_event BIGINT NOT NULL,
    PRIMARY KEY (reviewer, trace_id)
);
"""

# Wrong passwords slow the browser and the address they came from (annotate.accounts.throttle);
# a lead's unlock starts a name's count afresh.
LOGIN_TRIES = """
ALTER TABLE login_failures ADD COLUMN browser VARCHAR;  -- a random id per browser session
ALTER TABLE login_failures ADD COLUMN address VARCHAR;  -- the client's network address
CREATE TABLE login_unlocks (
    name VARCHAR NOT NULL,
    unlocked_at TIMESTAMP NOT NULL,
    unlocked_by VARCHAR NOT NULL
);
"""
