"""traces: the Trace row every input format becomes (rows.py), its validation (parse.py, with
plain.py taking the usual shapes at once and keys.py warning of nested keys it ignores), and
the limits the store can hold (limits.py, offsets.py); its untrusted text written into
Markdown (markdown.py, the one escape) and fenced for an LLM prompt (fences.py); a batch of
traces as the Arrow tables the store's insert takes (tables.py), built without importing
pandas (pandas_probe.py: pyarrow's question whether a list is a pandas object, answered).

The bottom of the library, below store/: imports no other annotate package.
"""

from annotate.traces.parse import (
    JUDGE_LEVELS,
    KNOWN_FIELDS,
    REQUIRED_FIELDS,
    check_verdict,
    parse_record,
    parse_timestamp,
)
from annotate.traces.rows import (
    Claim,
    ContextItem,
    JudgeVerdict,
    Record,
    RowError,
    Trace,
    describe_type,
    printable,
    shown,
    to_json_bytes,
    unexpected_error,
)

__all__ = [
    "JUDGE_LEVELS",
    "KNOWN_FIELDS",
    "REQUIRED_FIELDS",
    "Claim",
    "ContextItem",
    "JudgeVerdict",
    "Record",
    "RowError",
    "Trace",
    "check_verdict",
    "describe_type",
    "parse_record",
    "parse_timestamp",
    "printable",
    "shown",
    "to_json_bytes",
    "unexpected_error",
]
