"""Migrations 0017_connector_traces (which traces came from which tracing server, under the
tool's own ids) and 0018_connector_pushes (what was last sent back to a server, so a second
export sends only what changed). Read by schema.py only."""

from __future__ import annotations

CONNECTOR_TRACES = """
CREATE TABLE connector_traces (       -- one row per tool trace pulled (a call of it or not)
    source VARCHAR NOT NULL,          -- 'phoenix <url> project <name>' | 'mlflow <uri> experiment <name>'
    tool_trace_id VARCHAR NOT NULL,   -- the tool's own trace id (MLflow: tr-...)
    otel_trace_id VARCHAR,            -- the OTel trace id the stored calls carry (attributes)
    started_at TIMESTAMP,             -- the trace's start, as the server listed it
    import_id BIGINT,                 -- the import that stored its calls
    pulled_at TIMESTAMP NOT NULL,
    PRIMARY KEY (source, tool_trace_id)
);
"""

CONNECTOR_PUSHES = """
CREATE TABLE connector_pushes (       -- the latest content sent per destination and annotation
    destination VARCHAR NOT NULL,     -- 'phoenix <url> project <name>' | 'mlflow <uri> experiment <name>'
    target VARCHAR NOT NULL,          -- the tool's trace id, or 'project' for the card
    name VARCHAR NOT NULL,            -- annotation / assessment / tag name
    digest VARCHAR NOT NULL,          -- sha256 of what was sent
    remote_id VARCHAR,                -- the tool's id of it (an MLflow assessment id)
    sent_at TIMESTAMP NOT NULL,
    PRIMARY KEY (destination, target, name)
);
"""

CONNECTOR_MIGRATIONS = [
    ("0017_connector_traces", CONNECTOR_TRACES),
    ("0018_connector_pushes", CONNECTOR_PUSHES),
]
