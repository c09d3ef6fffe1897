"""The DuckDB schema as named, ordered migrations; the only place tables are defined.

A migration is applied once, in order, inside a transaction, and recorded in
schema_migrations. Never edit an applied migration: add the next one.
"""

from __future__ import annotations

import json

from annotate.store.schema_active import ACTIVE_DRAWS
from annotate.store.schema_connectors import CONNECTOR_MIGRATIONS
from annotate.store.schema_kept import KEPT_FRAMES
from annotate.store.schema_ratings import RATINGS, default_criteria_migration
from annotate.store.schema_review import (
    ATTRIBUTE_NAMES,
    CLAIM_VERSIONS,
    FEWER_INDEXES,
    JUDGE_REVEALS,
    LOGIN_TRIES,
    QUESTIONS,
)
from annotate.store.schema_rubrics import LLM_CALL_SCOPE, rubrics_migration

DEFAULT_RUBRIC_LABELS = [
    {
        "label": "supported",
        "definition": "the context states or directly entails the claim",
        "binary": "supported",
    },
    {
        "label": "partially_supported",
        "definition": "some of the claim is supported, some is not",
        "binary": "unsupported",
    },
    {
        "label": "contradicted",
        "definition": "the context says something incompatible",
        "binary": "unsupported",
    },
    {
        "label": "not_in_context",
        "definition": "the context neither supports nor contradicts it",
        "binary": "unsupported",
    },
    {
        "label": "not_a_claim",
        "definition": "advice, opinion, greeting, question: nothing to verify",
        "binary": "excluded",
    },
]

ERROR_TYPES = ("entity", "number", "temporal", "relation", "negation", "overgeneralization",
               "causal", "attribution", "fabricated_detail", "other")  # fmt: skip

_INITIAL = """
CREATE SEQUENCE import_ids START 1;
CREATE SEQUENCE label_event_ids START 1;
CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    kind VARCHAR NOT NULL,            -- traces | labels
    path VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    imported INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    conflicts INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE import_errors (
    import_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    field VARCHAR NOT NULL,
    message VARCHAR NOT NULL
);
CREATE TABLE traces (
    trace_id VARCHAR PRIMARY KEY,
    import_id INTEGER NOT NULL,
    source_line INTEGER NOT NULL,
    content_hash VARCHAR NOT NULL,
    timestamp TIMESTAMP,
    feature VARCHAR,
    risk_category VARCHAR,
    model VARCHAR,
    request VARCHAR,
    response VARCHAR NOT NULL,
    judgeable BOOLEAN NOT NULL,
    attributes JSON NOT NULL
);
CREATE TABLE contexts (
    trace_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    source VARCHAR,
    text VARCHAR NOT NULL
);
CREATE TABLE claims (
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    text VARCHAR NOT NULL,
    start_offset INTEGER,
    end_offset INTEGER,
    origin VARCHAR NOT NULL           -- provided | sentences | llm
);
CREATE TABLE judge_verdicts (
    trace_id VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    level VARCHAR NOT NULL,           -- claim | response
    claim_index INTEGER,
    label VARCHAR NOT NULL,
    score DOUBLE,
    explanation VARCHAR,
    origin VARCHAR NOT NULL,          -- import | run
    import_id INTEGER
);
CREATE TABLE rubrics (
    version INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    labels JSON NOT NULL,
    active BOOLEAN NOT NULL,
    created_at TIMESTAMP NOT NULL,
    created_by VARCHAR
);
CREATE TABLE users (
    name VARCHAR PRIMARY KEY,
    role VARCHAR NOT NULL,            -- reviewer | lead | auditor
    password_hash VARCHAR,            -- NULL: external reviewer, cannot log in
    external BOOLEAN NOT NULL,
    active BOOLEAN NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE label_events (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('label_event_ids'),
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    error_type VARCHAR,
    note VARCHAR,
    rubric_version INTEGER NOT NULL,
    shown_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    origin VARCHAR NOT NULL,          -- app | import
    import_id INTEGER,
    content_hash VARCHAR              -- imported events: skip the same row imported twice
);
CREATE INDEX contexts_trace ON contexts (trace_id);
CREATE INDEX claims_trace ON claims (trace_id);
CREATE INDEX verdicts_trace ON judge_verdicts (trace_id);
"""


def _default_rubric() -> str:
    labels = json.dumps(DEFAULT_RUBRIC_LABELS)
    escaped = labels.replace("'", "''")
    return (
        "INSERT INTO rubrics VALUES (1, 'default', '"
        + escaped
        + "', TRUE, now()::TIMESTAMP, 'annotate');"
    )


_SAMPLES = """
CREATE TABLE samples (
    name VARCHAR PRIMARY KEY,
    seed BIGINT NOT NULL,
    by_columns JSON NOT NULL,
    allocation VARCHAR NOT NULL,
    min_per_stratum INTEGER NOT NULL,
    filters JSON NOT NULL,
    frame_size INTEGER NOT NULL,
    excluded JSON NOT NULL,
    max_import_id INTEGER NOT NULL,   -- the frame is the traces imported up to here
    hash_rule VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    created_by VARCHAR NOT NULL
);
CREATE TABLE sample_strata (
    sample VARCHAR NOT NULL,
    stratum_key VARCHAR NOT NULL,     -- JSON list of the stratum's values, in by_columns order
    population INTEGER NOT NULL,
    sample_size INTEGER NOT NULL,
    judge_rate DOUBLE
);
CREATE TABLE sample_units (
    sample VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    stratum_key VARCHAR NOT NULL,
    rank INTEGER NOT NULL,            -- position in the stratum's hash order, from 1
    draw INTEGER NOT NULL,            -- 1 for the first draw, 2.. for top-ups
    inclusion_probability DOUBLE NOT NULL,
    weight DOUBLE NOT NULL
);
CREATE TABLE sample_draws (
    sample VARCHAR NOT NULL,
    draw INTEGER NOT NULL,
    added INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    created_by VARCHAR NOT NULL
);
CREATE INDEX sample_units_sample ON sample_units (sample);
"""

_LABELLING = """
CREATE SEQUENCE llm_call_ids START 1;
CREATE SEQUENCE skip_event_ids START 1;
CREATE SEQUENCE adjudication_ids START 1;
CREATE TABLE llm_calls (
    id BIGINT PRIMARY KEY DEFAULT nextval('llm_call_ids'),
    purpose VARCHAR NOT NULL,         -- claim_extraction | judge
    trace_id VARCHAR,
    model VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    request_id VARCHAR,
    input_tokens INTEGER,
    output_tokens INTEGER,
    raw_response VARCHAR,
    error VARCHAR,                    -- a parse or API failure, recorded, never guessed around
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE claim_flags (
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,          -- not_atomic | not_in_response | not_a_claim | other
    note VARCHAR,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE assignments (
    sample VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    position INTEGER NOT NULL,        -- the reviewer's shuffled order
    active BOOLEAN NOT NULL,
    assigned_at TIMESTAMP NOT NULL,
    assigned_by VARCHAR NOT NULL
);
CREATE TABLE skip_events (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('skip_event_ids'),
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE adjudications (
    event_id BIGINT PRIMARY KEY DEFAULT nextval('adjudication_ids'),
    trace_id VARCHAR NOT NULL,
    claim_index INTEGER NOT NULL,
    adjudicator VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    error_type VARCHAR,
    reason VARCHAR NOT NULL,
    rubric_version INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE settings (
    key VARCHAR PRIMARY KEY,
    value JSON NOT NULL
);
CREATE INDEX assignments_reviewer ON assignments (reviewer, sample);
CREATE INDEX label_events_claim ON label_events (trace_id, claim_index);
"""

_TRUST = """
CREATE SEQUENCE activity_ids START 1;
CREATE TABLE activity (
    id BIGINT PRIMARY KEY DEFAULT nextval('activity_ids'),
    acted_at TIMESTAMP NOT NULL,
    actor VARCHAR NOT NULL,           -- the signed-in account, --as NAME, or the OS user
    origin VARCHAR NOT NULL,          -- app | cli
    kind VARCHAR NOT NULL,            -- import | sample | top_up | claims | assignment | ...
    subject VARCHAR,                  -- what it acted on: a sample, an import id, a user
    detail JSON NOT NULL
);
CREATE TABLE auth_sessions (
    token_hash VARCHAR PRIMARY KEY,   -- sha256 of the random token; the token is never stored
    name VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP,
    revoked_reason VARCHAR            -- logout | deactivated | password_changed
);
CREATE TABLE login_failures (
    name VARCHAR NOT NULL,
    failed_at TIMESTAMP NOT NULL
);
CREATE INDEX activity_acted_at ON activity (acted_at);
ALTER TABLE imports ADD COLUMN created_by VARCHAR;
ALTER TABLE label_events ADD COLUMN based_on BIGINT;       -- the latest event when the claim was shown
ALTER TABLE label_events ADD COLUMN claim_version VARCHAR; -- hash of the claim text that was shown
"""

_JUDGE_LABEL_MAP = """
CREATE SEQUENCE judge_label_map_ids START 1;
CREATE TABLE judge_label_map (     -- append-only: the current mapping is the latest row
    id BIGINT PRIMARY KEY DEFAULT nextval('judge_label_map_ids'),
    judge VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL CHECK (outcome IN ('supported', 'unsupported', 'abstained')),
    set_by VARCHAR NOT NULL,
    set_at TIMESTAMP NOT NULL
);
"""

_CANARY = """
CREATE TABLE canary_suites (
    name VARCHAR PRIMARY KEY,
    sample VARCHAR NOT NULL,          -- the sample whose traces were copied
    rule VARCHAR NOT NULL,            -- halve | scale:F | shift:D
    swap_names BOOLEAN NOT NULL,
    seed BIGINT NOT NULL,
    date_shift_days INTEGER NOT NULL,
    queue_sample VARCHAR NOT NULL,    -- the sample "neither" responses are labelled in
    created_at TIMESTAMP NOT NULL,
    created_by VARCHAR NOT NULL
);
CREATE TABLE canary_items (
    suite VARCHAR NOT NULL,
    canary_id VARCHAR NOT NULL,
    source_trace VARCHAR NOT NULL,
    question_kind VARCHAR NOT NULL,   -- request | generated
    request VARCHAR NOT NULL,
    context JSON NOT NULL,            -- the fictive context, [{source, text}]
    checks JSON NOT NULL,             -- the changes this item's answer is checked for
    value_map JSON NOT NULL,          -- every change made to the trace's context
    PRIMARY KEY (suite, canary_id)
);
CREATE TABLE canary_responses (       -- a replayed response (a trace) scored against its item
    suite VARCHAR NOT NULL,
    canary_id VARCHAR NOT NULL,
    trace_id VARCHAR NOT NULL,
    import_id INTEGER NOT NULL,
    outcome VARCHAR NOT NULL,         -- followed | leak | both | neither
    imported_at TIMESTAMP NOT NULL
);
"""

_SAMPLE_SOURCES = """
ALTER TABLE samples ADD COLUMN source JSON;  -- {path, format, map, files}: drawn in place; NULL: imported
CREATE TABLE sample_judge_counts (    -- a source's judge verdicts per stratum (the frame's, not the sample's)
    sample VARCHAR NOT NULL,
    stratum_key VARCHAR NOT NULL,
    judge VARCHAR,
    label VARCHAR,
    traces BIGINT NOT NULL
);
"""


# Counts by label alone cannot give a trace's outcome under a later label mapping (a response
# verdict wins over the claims'), so the frame's verdicts are kept per trace signature: the
# undrawn traces of a stratum grouped by their latest response label and claim labels.
_SOURCE_JUDGE_COUNTS = """
UPDATE samples SET source = json_merge_patch(source, '{"judge_counts": "not recorded"}')
    WHERE source IS NOT NULL;         -- drawn before: no judge rates until drawn again
DROP TABLE sample_judge_counts;
CREATE TABLE sample_judge_counts (    -- a source sample's undrawn frame traces, per stratum and verdict signature
    sample VARCHAR NOT NULL,
    stratum_key VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    response_label VARCHAR,           -- the traces' latest response-level label (NULL: none)
    claim_labels VARCHAR[] NOT NULL,  -- the distinct labels of their latest claim-level verdicts
    claim_verdicts BIGINT[] NOT NULL, -- latest claim-level verdicts with each of those labels, summed
    traces BIGINT NOT NULL
);
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_initial", _INITIAL),
    ("0002_default_rubric", _default_rubric()),
    ("0003_samples", _SAMPLES),
    ("0004_labelling", _LABELLING),
    ("0005_trust", _TRUST),
    ("0006_judge_label_map", _JUDGE_LABEL_MAP),
    ("0007_rubrics", rubrics_migration(ERROR_TYPES)),
    ("0008_canary", _CANARY),
    ("0009_sample_sources", _SAMPLE_SOURCES),
    ("0010_claim_versions", CLAIM_VERSIONS),
    ("0011_questions", QUESTIONS),
    ("0012_source_judge_counts", _SOURCE_JUDGE_COUNTS),
    ("0013_attribute_names", ATTRIBUTE_NAMES),
    ("0014_fewer_indexes", FEWER_INDEXES),
    ("0015_judge_reveals", JUDGE_REVEALS),
    ("0016_login_tries", LOGIN_TRIES),
    *CONNECTOR_MIGRATIONS,  # 0017_connector_traces, 0018_connector_pushes
    ("0020_ratings", RATINGS),
    ("0021_default_criteria", default_criteria_migration()),
    ("0023_llm_call_scope", LLM_CALL_SCOPE),
    ("0025_active_draws", ACTIVE_DRAWS),
    ("0026_kept_frames", KEPT_FRAMES),
]
