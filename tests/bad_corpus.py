"""The bad-input corpus: kinds of broken files, each mixing bad rows with good ones, and what
an import must report for each (exit code, first reported line and field, good rows kept)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

TEXT = "Refunds take 5 days."
LONG_CELL = "x" * 200_000  # over the csv module's default field limit (131,072)


def good(n: int, **extra: Any) -> dict[str, Any]:
    row = {
        "trace_id": f"g-{n}",
        "response": TEXT,
        "context": [TEXT],
        "claims": [{"text": TEXT, "start": 0, "end": len(TEXT)}],
    }
    return {**row, **extra}


def bad(**fields: Any) -> dict[str, Any]:
    """A row like the good ones with `fields` replaced (None removes a field)."""
    row = {"trace_id": "bad", "response": TEXT, "context": [TEXT], **fields}
    return {k: v for k, v in row.items() if v is not None}


def line(value: Any) -> bytes:
    return json.dumps(value).encode()


def jsonl(*middle: bytes) -> bytes:
    """g-1, the bad lines, g-2: the first bad line is line 2."""
    return b"\n".join([line(good(1)), *middle, line(good(2))]) + b"\n"


def csv_file(*rows: str) -> bytes:
    head = "trace_id,response,context"
    return ("\n".join([head, f"g-1,{TEXT},{TEXT}", *rows, f"g-2,{TEXT},{TEXT}"]) + "\n").encode()


def parquet(rows: list[dict[str, Any]], schema: pa.Schema | None = None, **kw: Any) -> bytes:
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


def parquet_scores(score: float) -> bytes:
    judge = [{"judge": "j", "level": "response", "label": "supported", "score": score}]
    rows = [
        {"trace_id": "g-1", "response": TEXT, "context": TEXT, "judge": []},
        {"trace_id": "bad", "response": TEXT, "context": TEXT, "judge": judge},
        {"trace_id": "g-2", "response": TEXT, "context": TEXT, "judge": []},
    ]
    return parquet(rows)


def parquet_late_timestamp() -> bytes:
    seconds = pa.array([0, 300_000_000_000, 0], pa.int64()).cast(pa.timestamp("s"))
    table = pa.table(
        {
            "trace_id": ["g-1", "bad", "g-2"],
            "response": [TEXT] * 3,
            "context": [TEXT] * 3,
            "timestamp": seconds,
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def parquet_damaged() -> bytes:
    """Four good rows in two row groups, then a row group whose page header is garbage."""
    rows = [{"trace_id": f"g-{i}", "response": TEXT, "context": TEXT} for i in range(1, 7)]
    data = bytearray(parquet(rows, row_group_size=2, compression="none"))
    meta = pq.ParquetFile(io.BytesIO(bytes(data))).metadata
    offset = meta.row_group(2).column(1).data_page_offset
    data[offset : offset + 30] = b"\xff" * 30
    return bytes(data)


def otlp_span(trace: str, span: str, start: str = "1772877600000000000") -> dict[str, Any]:
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.request.model", "value": {"stringValue": "m-1"}},
        {"key": "gen_ai.completion", "value": {"stringValue": TEXT}},
    ]
    raw = {"traceId": trace, "spanId": span, "name": "chat m-1", "startTimeUnixNano": start}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [{**raw, "attributes": attributes}]}]}]}


def otlp_evaluation(trace: str, span: str) -> dict[str, Any]:
    attributes = [
        {"key": "gen_ai.evaluation.name", "value": {"stringValue": "judge"}},
        {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "supported"}},
    ]
    record = {
        "eventName": "gen_ai.evaluation.result",
        "traceId": trace,
        "spanId": span,
        "attributes": attributes,
    }
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}


def otlp(*middle: Any) -> bytes:
    lines = [otlp_span("a1" * 16, "b1" * 8), *middle, otlp_span("a2" * 16, "b2" * 8)]
    return b"\n".join(line(item) for item in lines) + b"\n"


OTLP_GOOD = {"a1" * 16, "a2" * 16}


@dataclass(frozen=True)
class Kind:
    name: str
    suffix: str
    content: bytes | Callable[[], bytes]
    exit: int
    line: int | None  # first reported line or row; None: the whole file is refused
    field: str | None  # the field named there ("" for the whole line)
    kept: frozenset[str] = frozenset({"g-1", "g-2"})
    route: str = "traces"
    warns: bool = False  # reported as a warning, the row imported

    def data(self) -> bytes:
        return self.content() if callable(self.content) else self.content


def kinds() -> list[Kind]:
    none: frozenset[str] = frozenset()
    k = Kind
    offsets = {"text": TEXT, "start": 3, "end": 9}
    overlap = [{"text": TEXT, "start": 0, "end": 20}, {"text": "5 days", "start": 13, "end": 19}]
    labels_good = "\n".join(
        json.dumps({"trace_id": "g-1", "claim": 0, "reviewer": name, "label": "supported"})
        for name in ("alice", "bob")
    )
    return [
        k("malformed JSON line", "jsonl", jsonl(b'{"trace_id": "bad", "response": '), 1, 2, ""),
        k("array on a line", "jsonl", jsonl(b"[1, 2]"), 1, 2, ""),
        k("trace_id missing", "jsonl", jsonl(line(bad(trace_id=None))), 1, 2, "trace_id"),
        k("trace_id blank", "jsonl", jsonl(line(bad(trace_id="  "))), 1, 2, "trace_id"),
        k("trace_id 2,000 chars", "jsonl", jsonl(line(bad(trace_id="t" * 2000))), 1, 2, "trace_id"),
        k("context missing", "jsonl", jsonl(line(bad(context=None))), 1, 2, "context"),
        k("context a number", "jsonl", jsonl(line(bad(context=7))), 1, 2, "context"),
        k(
            "context item without text",
            "jsonl",
            jsonl(line(bad(context=[{"source": "kb"}]))),
            1,
            2,
            "context[0]",
        ),
        k("response a list", "jsonl", jsonl(line(bad(response=["a"]))), 1, 2, "response"),
        k("claims a string", "jsonl", jsonl(line(bad(claims="x"))), 1, 2, "claims"),
        k(
            "judge claim index out of range",
            "jsonl",
            jsonl(line(bad(claims=[TEXT], judge=[{"claim": 3, "label": "supported"}]))),
            1,
            2,
            "judge[0].claim",
        ),
        k(
            "judge claim index over 2^31, no claims",
            "jsonl",
            jsonl(line(bad(judge=[{"claim": 2**31, "label": "supported"}]))),
            1,
            2,
            "judge[0].claim",
        ),
        k(
            "claim offset over 2^31",
            "jsonl",
            jsonl(line(bad(claims=[{"text": TEXT, "start": 0, "end": 2**31}]))),
            1,
            2,
            "claims[0].end",
        ),
        k(
            "claim offsets past the end",
            "jsonl",
            jsonl(line(bad(claims=[{"text": "not there", "start": 10, "end": 99}]))),
            1,
            2,
            "claims[0]",
        ),
        k(
            "claim offsets wrong, text found once",
            "jsonl",
            jsonl(line(bad(claims=[offsets]))),
            0,
            2,
            "claims[0]",
            frozenset({"g-1", "bad", "g-2"}),
            warns=True,
        ),
        k(
            "context item key misspelt (soruce)",
            "jsonl",
            jsonl(line(bad(context=[{"text": TEXT, "soruce": "kb"}]))),
            0,
            2,
            "context[0].soruce",
            frozenset({"g-1", "bad", "g-2"}),
            warns=True,
        ),
        k("overlapping claims", "jsonl", jsonl(line(bad(claims=overlap))), 1, 2, "claims[1]"),
        k(
            "judge label missing",
            "jsonl",
            jsonl(line(bad(judge=[{"judge": "j"}]))),
            1,
            2,
            "judge[0].label",
        ),
        k(
            "judge level unknown",
            "jsonl",
            jsonl(line(bad(judge=[{"level": "sentence", "label": "ok"}]))),
            1,
            2,
            "judge[0].level",
        ),
        k(
            "judge score a string",
            "jsonl",
            jsonl(line(bad(judge=[{"label": "ok", "score": "high"}]))),
            1,
            2,
            "judge[0].score",
        ),
        k(
            "judge score NaN (JSON Lines)",
            "jsonl",
            jsonl(
                b'{"trace_id": "bad", "response": "r", "context": [], "judge": [{"label": "ok", "score": NaN}]}'
            ),
            1,
            2,
            "judge[0].score",
        ),
        k(
            "judge score 1e400",
            "jsonl",
            jsonl(
                b'{"trace_id": "bad", "response": "r", "context": [], "judge": [{"label": "ok", "score": 1e400}]}'
            ),
            1,
            2,
            "judge[0].score",
        ),
        k(
            "timestamp not a date",
            "jsonl",
            jsonl(line(bad(timestamp="yesterday"))),
            1,
            2,
            "timestamp",
        ),
        k(
            "timestamp past 9999 in UTC",
            "jsonl",
            jsonl(line(bad(timestamp="9999-12-31T23:00:00-05:00"))),
            1,
            2,
            "timestamp",
        ),
        k(
            "timestamp before year 1 in UTC",
            "jsonl",
            jsonl(line(bad(timestamp="0001-01-01T00:30:00+05:00"))),
            1,
            2,
            "timestamp",
        ),
        k(
            "attributes not an object",
            "jsonl",
            jsonl(line(bad(attributes=[1]))),
            1,
            2,
            "attributes",
        ),
        k(
            "attribute nested 300 deep",
            "jsonl",
            jsonl(
                b'{"trace_id": "bad", "response": "r", "context": [], "deep": '
                + b"[" * 300
                + b"]" * 300
                + b"}"
            ),
            1,
            2,
            "deep",
        ),
        k(
            "attribute integer over 64 bits (JSON array)",
            "json",
            b"["
            + line(good(1))
            + b', {"trace_id": "bad", "response": "r", "context": [], "big": 1180591620717411303424}, '
            + line(good(2))
            + b"]",
            1,
            2,
            "big",
        ),
        k(
            "lone surrogate (JSON line)",
            "jsonl",
            jsonl(b'{"trace_id": "bad", "response": "a\\ud800b", "context": []}'),
            1,
            2,
            "response",
        ),
        k(
            "NUL escape in the response",
            "jsonl",
            jsonl(line(bad(response="a\x00b"))),
            1,
            2,
            "response",
        ),
        k(
            "stray NUL byte on a line",
            "jsonl",
            jsonl(b'{"trace_id": "bad",\x00 "response": "r"}'),
            1,
            2,
            "",
        ),
        k(
            "invalid UTF-8 line",
            "jsonl",
            jsonl(b'{"trace_id": "bad", "response": "\xff"}'),
            1,
            2,
            "",
        ),
        k(
            "same trace_id, other content",
            "jsonl",
            jsonl(line(good(1, response=TEXT + " Or not."))),
            1,
            2,
            "trace_id",
        ),
        k(
            "lone surrogate (JSON array)",
            "json",
            b"["
            + line(good(1))
            + b', {"trace_id": "bad", "response": "a\\udc00", "context": []}, '
            + line(good(2))
            + b"]",
            1,
            2,
            "response",
        ),
        k(
            "JSON array cut short",
            "json",
            b"[" + line(good(1)) + b", " + line(good(2)) + b', {"trace_id": "bad", "resp',
            1,
            3,
            "",
        ),
        k(
            "CSV unterminated quote",
            "csv",
            csv_file('bad,"never closed,x', "g-3,a,b"),
            1,
            3,
            "",
            frozenset({"g-1"}),
        ),
        k("CSV broken quoting", "csv", csv_file('bad,"a"b,c'), 1, 3, "", frozenset({"g-1"})),
        k(
            "CSV cell over 16,000,000 chars",
            "csv",
            lambda: csv_file(f"bad,{'y' * 16_000_001},c"),
            1,
            3,
            "",
            frozenset({"g-1"}),
        ),
        k(
            "CSV cell of 200,000 chars (fine)",
            "csv",
            csv_file(f"long,{LONG_CELL},c"),
            0,
            None,
            None,
            frozenset({"g-1", "long", "g-2"}),
        ),
        k("CSV too many cells", "csv", csv_file("bad,a,b,c,d"), 1, 3, ""),
        k("CSV bad JSON cell", "csv", csv_file('bad,r,"[1, 2"'), 1, 3, "context"),
        k("CSV NUL in a cell", "csv", csv_file("bad,a\x00b,c"), 1, 3, "response"),
        k(
            "CSV NaN score in a JSON cell",
            "csv",
            b"trace_id,response,context,judge\n"
            + f"g-1,{TEXT},{TEXT},\n".encode()
            + b'bad,r,c,"[{""label"": ""ok"", ""score"": NaN}]"\n'
            + f"g-2,{TEXT},{TEXT},\n".encode(),
            1,
            3,
            "judge[0].score",
        ),
        k(
            "Parquet NaN score",
            "parquet",
            lambda: parquet_scores(float("nan")),
            1,
            2,
            "judge[0].score",
        ),
        k(
            "Parquet Infinity score",
            "parquet",
            lambda: parquet_scores(float("inf")),
            1,
            2,
            "judge[0].score",
        ),
        k("Parquet timestamp after 9999", "parquet", parquet_late_timestamp, 1, 2, "timestamp"),
        k(
            "Parquet damaged row group",
            "parquet",
            parquet_damaged,
            1,
            5,
            "",
            frozenset({"g-1", "g-2", "g-3", "g-4"}),
        ),
        k("Parquet cut short", "parquet", lambda: parquet_scores(0.5)[:-40], 2, None, None, none),
        k(
            "OTLP start time of 25 digits",
            "jsonl",
            otlp(otlp_span("a3" * 16, "b3" * 8, "1" * 25)),
            1,
            2,
            "startTimeUnixNano",
            frozenset(OTLP_GOOD),
        ),
        k(
            'OTLP resourceSpans: "nope"',
            "jsonl",
            otlp({"resourceSpans": "nope"}),
            1,
            2,
            "resourceSpans",
            frozenset(OTLP_GOOD),
        ),
        k(
            "OTLP line with no spans",
            "jsonl",
            otlp({"resourceSpans": []}),
            1,
            2,
            "",
            frozenset(OTLP_GOOD),
        ),
        k(
            "OTLP evaluation of an unknown span",
            "jsonl",
            otlp(otlp_evaluation("a9" * 16, "b9" * 8)),
            1,
            2,
            "gen_ai.evaluation.result",
            frozenset(OTLP_GOOD),
        ),
        k(
            "transcript line not JSON",
            "jsonl",
            b'{"role": "user", "content": "How long do refunds take?"}\n{oops\n'
            b'{"role": "assistant", "content": "Refunds take 5 days."}\n',
            1,
            2,
            "",
            frozenset({"{stem}:1"}),  # a transcript's trace ids name the file
        ),
        k("binary file", "bin", b"\x00\x01\x02\x03" * 400, 2, None, None, none),
        k("empty file", "jsonl", b"", 2, None, None, none),
        k(
            "labels: reviewer name of 100,000 chars",
            "jsonl",
            (
                labels_good
                + "\n"
                + json.dumps(
                    {"trace_id": "g-1", "claim": 0, "reviewer": "r" * 100_000, "label": "supported"}
                )
            ).encode(),
            1,
            3,
            "reviewer",
            frozenset({"alice", "bob"}),
            route="labels",
        ),
        k(
            "labels: reviewer name with a space",
            "jsonl",
            (
                labels_good
                + "\n"
                + json.dumps(
                    {"trace_id": "g-1", "claim": 0, "reviewer": "carol smith", "label": "supported"}
                )
            ).encode(),
            1,
            3,
            "reviewer",
            frozenset({"alice", "bob"}),
            route="labels",
        ),
        k(
            "labels: created_at past 9999 in UTC",
            "jsonl",
            (
                labels_good
                + "\n"
                + json.dumps(
                    {
                        "trace_id": "g-1",
                        "claim": 0,
                        "reviewer": "dan",
                        "label": "supported",
                        "created_at": "9999-12-31T23:00:00-05:00",
                    }
                )
            ).encode(),
            1,
            3,
            "created_at",
            frozenset({"alice", "bob"}),
            route="labels",
        ),
        k(
            "labels: claim index over 2^31",
            "jsonl",
            (
                labels_good
                + "\n"
                + json.dumps(
                    {"trace_id": "g-1", "claim": 2**31, "reviewer": "erin", "label": "supported"}
                )
            ).encode(),
            1,
            3,
            "claim",
            frozenset({"alice", "bob"}),
            route="labels",
        ),
    ]


TRACES_FOR_LABELS = jsonl()  # g-1 and g-2, one claim each: what label kinds label
