"""Sliced rates as CSV, Parquet and JSON, and every export recorded (who, when, what, hash).

CSV cells that a spreadsheet would run as a formula (starting with =, +, -, @, or a tab or
carriage return) are neutralised with a leading apostrophe (OWASP's CSV injection advice).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotate.accounts.activity import Actor, record_act
from annotate.errors import UsageError
from annotate.store import Store

FORMATS = ("csv", "parquet", "json")
COLUMNS = ("slice", "level", "estimator", "n", "rate", "low", "high", "method", "state")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """A text cell a spreadsheet would evaluate gets a leading apostrophe; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def flat_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One flat record per rate: the slice as canonical JSON text, the rest as they are."""
    return [
        {
            **{c: row.get(c) for c in COLUMNS},
            "slice": json.dumps(row["slice"], sort_keys=True, ensure_ascii=False),
            "reason": row.get("reason"),
        }
        for row in rows
    ]


def rates_csv(rows: Sequence[Mapping[str, Any]]) -> bytes:
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow([*COLUMNS, "reason"])
    for row in flat_rows(rows):
        out.writerow(["" if v is None else neutralise(v) for v in row.values()])
    return buffer.getvalue().encode()


def rates_parquet(rows: Sequence[Mapping[str, Any]]) -> bytes:
    schema = pa.schema(
        [("slice", pa.string()), ("level", pa.string()), ("estimator", pa.string()),
         ("n", pa.int64()), ("rate", pa.float64()), ("low", pa.float64()),
         ("high", pa.float64()), ("method", pa.string()), ("state", pa.string()),
         ("reason", pa.string())]
    )  # fmt: skip
    table = pa.Table.from_pylist(flat_rows(rows), schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def rates_json(rows: Sequence[Mapping[str, Any]]) -> bytes:
    return (json.dumps({"rows": list(rows)}, ensure_ascii=False, indent=1) + "\n").encode()


def export_bytes(rows: Sequence[Mapping[str, Any]], fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise UsageError(f"--format is one of {', '.join(FORMATS)}, got {fmt!r}")
    return {"csv": rates_csv, "parquet": rates_parquet, "json": rates_json}[fmt](rows)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_export(
    store: Store, actor: Actor | str | None, what: str, data: bytes, **detail: Any
) -> str:
    """Record an export in the activity log with its hash; returns the hash."""
    digest = sha256(data)
    with store.transaction():
        record_act(store, actor, "export", what, sha256=digest, bytes=len(data), **detail)
    return digest


def write_export(
    store: Store,
    rows: Sequence[Mapping[str, Any]],
    fmt: str,
    path: str | Path,
    actor: Actor | str | None = None,
    sample: str | None = None,
) -> str:
    data = export_bytes(rows, fmt)
    Path(path).write_bytes(data)
    return record_export(store, actor, f"rates.{fmt}", data, path=str(path), sample=sample)
