"""traces: the Trace row every input format becomes, its validation, and the limits the store can hold.

The bottom of the library: imports only `annotate.errors` and the standard library (plus orjson).
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
