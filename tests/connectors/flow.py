"""The lead's path the connector tests share: pull a server's traces, draw a sample of every
call, split claims, one reviewer's labels (one claim contradicted, a number error, with a
note), the offline baseline judge; and readers of the store the tests check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotate.store import open_store

NOTE = "the policy says 80%, not 90%"


def server_args(kind: str, url: str, name: str) -> tuple[str, ...]:
    return (url, "--project" if kind == "phoenix" else "--experiment", name)


def stored(db: Path, query: str, params: list[Any] | None = None) -> list[tuple]:
    store = open_store(db)
    try:
        return store.fetchall(query, params)
    finally:
        store.close()


def call_rows(db: Path) -> list[tuple]:
    return stored(
        db,
        "SELECT trace_id, request, response, (SELECT list(text ORDER BY position) FROM contexts c "
        "WHERE c.trace_id = t.trace_id) FROM traces t ORDER BY trace_id",
    )


def span_of(db: Path, trace_id: str) -> str:
    return stored(
        db,
        "SELECT json_extract_string(attributes, '$.otel_span_id') FROM traces WHERE trace_id = ?",
        [trace_id],
    )[0][0]


def write_labels(path: Path, claims: list[tuple], wrong: tuple[str, int]) -> Path:
    lines = []
    for trace, index in claims:
        bad = (trace, index) == wrong
        lines.append({"trace_id": trace, "claim": index, "reviewer": "rita",
                      "label": "contradicted" if bad else "supported",
                      "error_type": "number" if bad else None, "note": NOTE if bad else None})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def labelled_sample(
    cli: Any, kind: str, url: str, name: str, db: Path, calls: int
) -> tuple[list[tuple], tuple[str, int]]:
    """The store a lead pushes from; its claims and the one labelled wrong."""
    assert cli("import", "--from", kind, *server_args(kind, url, name), db=db).code == 0
    assert cli("sample", "--name", "s", "--n", str(calls), "--by", "model", db=db).code == 0
    assert cli("claims", "--sample", "s", "--extractor", "sentences", db=db).code == 0
    claims = stored(db, "SELECT trace_id, claim_index FROM claims ORDER BY ALL")
    labels = write_labels(db.parent / "labels.jsonl", claims, claims[0])
    assert cli("import-labels", str(labels), db=db).code == 0
    assert cli("judge", "--sample", "s", "--baseline", db=db).code == 0
    return claims, claims[0]


def relabel(cli: Any, db: Path, claim: tuple[str, int], label: str = "supported") -> None:
    fixed = db.parent / "fix.jsonl"
    fixed.write_text(
        json.dumps({"trace_id": claim[0], "claim": claim[1], "reviewer": "rita", "label": label})
        + "\n"
    )
    assert cli("import-labels", str(fixed), db=db).code == 0


def export_feedback(kind: str, url: str, project: str) -> tuple[str, ...]:
    """`annotate export-feedback` of sample "s" to the server (the traces' Phoenix project or
    MLflow experiment), as the connector tests run it."""
    return ("export-feedback", "--to", kind, *server_args(kind, url, project), "--sample", "s")
