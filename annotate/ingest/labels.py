"""Import human labels made elsewhere, appended as label events (never replacing earlier ones).

Rows: {"trace_id", "claim": index, "reviewer", "label", "error_type"?, "note"?,
"created_at"?}. A reviewer is found as sign-in finds a name (exactly, else ignoring case
and how characters are written); a name no account has becomes an external reviewer who
cannot log in. Labels outside the active rubric are rejected by line, like bad trace rows;
rows of one file that give one reviewer's claim different verdicts at the same created_at
are conflicts, and neither is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.accounts.users import find_account, fold_name
from annotate.errors import InputError, UsageError, counted
from annotate.ingest import detect_format, input_file, read_records
from annotate.ingest.collector import collector_paused
from annotate.ingest.importer import (
    BATCH_SIZE,
    READ_BUFFER,
    ImportReport,
    Progress,
    add_errors,
)
from annotate.store import Store
from annotate.store import imports as import_sql
from annotate.store import labels as sql
from annotate.store import users as users_sql
from annotate.store.schema import ERROR_TYPES
from annotate.traces import (
    Record,
    RowError,
    describe_type,
    parse_timestamp,
    shown,
    unexpected_error,
)
from annotate.traces.limits import check_int32, check_name, check_reviewer_name, check_text

LABEL_FORMATS = ("jsonl", "json", "csv", "parquet")


def parse_label_row(record: Record, labels: list[str]) -> dict[str, Any] | list[RowError]:
    """Check one row's fields against the rubric; every problem on the row is reported.

    Never raises: an unexpected exception while checking the row becomes that row's error."""
    try:
        return _parse_label_row(record, labels)
    except Exception as exc:  # a bug must cost one row, never the file
        return [unexpected_error(record, exc)]


def _parse_label_row(record: Record, labels: list[str]) -> dict[str, Any] | list[RowError]:
    data = record.data
    if not isinstance(data, Mapping):
        message = f"must be a JSON object with trace_id, claim, reviewer and label, got {describe_type(data)}"
        return [RowError(record.line, "", message, record.unit)]
    errors: list[RowError] = []

    def fail(name: str, message: str) -> None:
        errors.append(RowError(record.line, name, message, record.unit))

    row = {name: data.get(name) for name in ("trace_id", "reviewer", "label", "error_type", "note")}
    for name in ("trace_id", "reviewer", "label"):
        value = row[name]
        if not isinstance(value, str) or not value.strip():
            got = "an empty string" if value == "" else describe_type(value)
            fail(name, f"is required and must be a non-empty string, got {got}")
        else:
            row[name] = _checked(fail, name, _TEXT_CHECKS[name], value)
    claim = data.get("claim")
    if isinstance(claim, str) and claim.isdigit():
        claim = int(claim)
    if not isinstance(claim, int) or isinstance(claim, bool) or claim < 0:
        fail(
            "claim", f"must be the claim's index in its trace (an integer >= 0), got {shown(claim)}"
        )
    else:
        _checked(fail, "claim", lambda v: check_int32(v, "the claim's index"), claim)
    if isinstance(row["label"], str) and row["label"] and row["label"] not in labels:
        fail(
            "label",
            f"{shown(row['label'])} is not in the active rubric; use one of: {', '.join(labels)}",
        )
    if row["error_type"] in ("", None):
        row["error_type"] = None
    elif row["error_type"] not in ERROR_TYPES:
        fail(
            "error_type",
            f"{shown(row['error_type'])} is not an error type; use one of: {', '.join(ERROR_TYPES)}",
        )
    if row["note"] is not None and not isinstance(row["note"], str):
        fail("note", f"must be a string, got {describe_type(row['note'])}")
    elif row["note"] is not None:
        _checked(fail, "note", check_text, row["note"])
    try:
        created = parse_timestamp(data.get("created_at"))
    except ValueError as exc:
        fail("created_at", str(exc))
        created = None
    if errors:
        return errors
    return {**row, "claim_index": claim, "created_at": created, "line": record.line}


_TEXT_CHECKS = {"trace_id": check_name, "reviewer": check_reviewer_name, "label": check_name}


def _checked(fail: Any, name: str, check: Any, value: Any) -> Any:
    """A traces.limits check; its ValueError is this field's error on the row."""
    try:
        return check(value)
    except ValueError as exc:
        fail(name, str(exc))
        return value


def _event_hash(row: dict[str, Any]) -> str:
    """Identity of an imported row, so importing the same file twice appends nothing twice."""
    key = [row[k] for k in ("trace_id", "claim_index", "reviewer", "label", "error_type", "note")]
    key.append(row["created_at"].isoformat() if row["created_at"] else None)
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()


@dataclass
class _File:
    """What the batches of one file share."""

    now: datetime  # the time of the rows without created_at: one for the whole file
    new_names: dict[str, str] = field(default_factory=dict)  # fold -> new external reviewer
    reviewers: dict[str, str | RowError] = field(default_factory=dict)  # as written -> found
    folds: dict[str, list[str]] | None = None  # fold -> the accounts' names, read once
    rows: int = 0  # rows staged so far: each row's position in the file


def import_labels(
    store: Store,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    progress: Progress | None = None,
    name: str | None = None,
    actor: Actor | str | None = None,
) -> ImportReport:
    """Append labels made elsewhere; `actor` is who imports them (None: the OS user)."""
    file_path = input_file(path, "annotate import-labels PATH", name)
    label = name or str(file_path)
    with file_path.open("rb", buffering=READ_BUFFER) as fh:
        chosen = fmt or detect_format(fh, label)
        if chosen not in LABEL_FORMATS:
            raise UsageError(f"labels must be {', '.join(LABEL_FORMATS)}, not {chosen}")
        with collector_paused(), store.transaction(bulk=True):
            who = as_actor(actor)
            import_id = import_sql.start_import(store, "labels", label, chosen, who.name)
            report = ImportReport(import_id, label, chosen)
            version, rubric = sql.active_rubric(store)
            names = [item["label"] for item in rubric]
            state = _File(datetime.now())
            sql.start_staging(store, import_id)
            batch: list[Record | RowError] = []
            for item in read_records(fh, chosen):
                batch.append(item)
                if len(batch) >= BATCH_SIZE:
                    _import_batch(store, report, batch, names, version, state)
                    batch = []
                    if progress:
                        progress(report.imported + report.rejected + report.duplicates, 0.0)
            _import_batch(store, report, batch, names, version, state)
            _settle(store, report, state)
            if report.imported + report.rejected + report.duplicates + report.conflicts == 0:
                raise InputError(f"{label} holds no rows: there is nothing to import")
            import_sql.finish_import(store, report.import_id, report.counts())
            record_act(store, who, "import_labels", str(import_id), file=label, **report.counts())
    return report


def _import_batch(
    store: Store,
    report: ImportReport,
    batch: list[Record | RowError],
    labels: list[str],
    version: int,
    state: _File,
) -> None:
    errors: list[RowError] = []
    rows: list[dict[str, Any]] = []
    for item in batch:
        parsed = [item] if isinstance(item, RowError) else parse_label_row(item, labels)
        if isinstance(parsed, list):
            errors.extend(parsed)
            report.rejected += 1
        else:
            rows.append(parsed)
    rows = _check_claims(store, rows, errors, report)
    rows = _check_reviewers(store, rows, errors, report, state)
    rows = _drop_duplicates(store, rows, report)
    for row in rows:
        row.update(rubric_version=version, origin="import", import_id=report.import_id)
        row["created_at"] = row["created_at"] or state.now
        row["pos"] = state.rows = state.rows + 1
    sql.stage_label_events(store, report.import_id, rows)
    report.imported += len(rows)  # less the conflicts, once the whole file is read
    add_errors(store, report, errors)


def _settle(store: Store, report: ImportReport, state: _File) -> None:
    """The whole file is read: rows that contradict each other are left out together, the
    rest appended, and the new reviewers who keep a label made external accounts."""
    errors = [_conflict(row) for row in sql.staged_conflicts(store, report.import_id)]
    report.conflicts += len(errors)
    report.imported -= len(errors)
    add_errors(store, report, errors)
    kept = sql.commit_staged(store, report.import_id)
    new = set(state.new_names.values())
    sql.add_external_reviewers(store, [name for name in kept if name in new])


def _conflict(row: dict[str, Any]) -> RowError:
    others = [line for line in row["lines"] if line != row["line"]] or [row["line"]]
    where = f"line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}"
    return RowError(
        row["line"],
        "label",
        f"{row['reviewer']!r} labels claim {row['claim_index']} of trace {row['trace_id']!r} "
        f"differently on {where} of this file with the same created_at (or none), so neither "
        "is the later verdict: none of them was kept. Keep the row meant, or give each row "
        "its own created_at",
    )


def _check_reviewers(
    store: Store,
    rows: list[dict[str, Any]],
    errors: list[RowError],
    report: ImportReport,
    state: _File,
) -> list[dict[str, Any]]:
    """Each row's reviewer found as sign-in finds the name and written as the account's own;
    a deactivated account's labels are refused, as its verdicts in the app are. Accounts do
    not change while the file is imported: each name is looked up once."""
    found = state.reviewers
    kept = []
    for row in rows:
        written = row["reviewer"]
        if written not in found:
            found[written] = _reviewer(store, written, state)
        name = found[written]
        if isinstance(name, str):
            row["reviewer"] = name
            kept.append(row)
        else:
            errors.append(RowError(row["line"], name.field, name.message))
            report.rejected += 1
    return kept


def _reviewer(store: Store, written: str, state: _File) -> str | RowError:
    """The account `written` names (as sign-in finds it), else the new external reviewer it
    names: NFKC-normalised as `user add` makes names, one spelling for all rows of the file."""
    if state.folds is None:  # every account by its fold, read once for the file
        state.folds = {}
        for name, *_ in users_sql.all_users(store):
            state.folds.setdefault(fold_name(name), []).append(name)
    twins = state.folds.get(fold_name(written))
    account = find_account(store, written) if twins else None  # no twin: no account
    if account is not None:
        if not account["active"]:
            message = f"{account['name']!r} is a deactivated account: its labels are not taken"
            return RowError(0, "reviewer", message)
        return str(account["name"])
    if twins:  # accounts made before names were compared this way
        return RowError(
            0,
            "reviewer",
            f"{written!r} could be any of the accounts {', '.join(map(repr, twins))}, which differ "
            "only in case or in how a character is written; write the account's exact name",
        )
    try:
        name = check_reviewer_name(unicodedata.normalize("NFKC", written))
    except ValueError as exc:
        return RowError(0, "reviewer", str(exc))
    return state.new_names.setdefault(fold_name(name), name)


def _check_claims(
    store: Store, rows: list[dict[str, Any]], errors: list[RowError], report: ImportReport
) -> list[dict[str, Any]]:
    current = sql.existing_claims(store, list({row["trace_id"] for row in rows}))
    kept = []
    for row in rows:
        indexes = current.get(row["trace_id"])
        if indexes is None:
            message = f"{row['trace_id']!r} is not in the store; import the trace before its labels"
            errors.append(RowError(row["line"], "trace_id", message))
        elif row["claim_index"] not in indexes:
            errors.append(RowError(row["line"], "claim", _no_such_claim(row, indexes)))
        else:
            kept.append(row)
            continue
        report.rejected += 1
    return kept


def _no_such_claim(row: dict[str, Any], indexes: list[int]) -> str:
    trace, claim = row["trace_id"], row["claim_index"]
    if not indexes:
        return f"trace {trace!r} has no claims yet; create its claims first"
    if indexes == list(range(len(indexes))):
        span = f"{counted(len(indexes), 'claim')} (indexes 0 to {len(indexes) - 1})"
    else:  # a lead revised some: the current ones keep their own indexes
        span = f"current claims {', '.join(map(str, indexes))}"
    return f"trace {trace!r} has {span}, so claim {claim} does not exist"


def _drop_duplicates(
    store: Store, rows: list[dict[str, Any]], report: ImportReport
) -> list[dict[str, Any]]:
    for row in rows:
        row["content_hash"] = _event_hash(row)
    stored = sql.stored_event_hashes(store, [row["content_hash"] for row in rows], report.import_id)
    kept, seen = [], set(stored)
    for row in rows:
        if row["content_hash"] in seen:
            report.duplicates += 1
        else:
            seen.add(row["content_hash"])
            kept.append(row)
    return kept
