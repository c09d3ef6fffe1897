"""Migrations 0010_claim_versions (a lead's new versions of flagged claims) and 0011_questions
(reviewers' questions to the leads, with their answers). Read by schema.py only."""

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
