"""The `annotate` commands that bring traces in and look at them: import, import-labels,
status, errors, init (the store and the bundled sample) and demo-data.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor
from annotate.cli.connectors import add_server_options, run_pull
from annotate.cli.console import (
    EXIT_OK,
    EXIT_REJECTED,
    common,
    emit,
    out_dir,
    say,
    shown,
    writer,
)
from annotate.errors import UsageError, counted
from annotate.ingest import FORMATS, input_file
from annotate.ingest.call_context import parse_context_kinds
from annotate.ingest.importer import ImportReport, import_traces, parse_mapping, stored_whole
from annotate.ingest.labels import LABEL_FORMATS, import_labels
from annotate.store import Store
from annotate.store.imports import import_errors
from annotate.store.status import store_status

PRINTED_ERRORS = 20
SAMPLE_TRACES = Path("data") / "sample_traces.jsonl"
DEMO_SAMPLE = "demo"
MIN_PER_DEMO_STRATUM = 8


def add_import_commands(commands: Any, *_: Any) -> None:
    _add_import(commands)
    _add_import_labels(commands)
    _add_status(commands)
    _add_errors(commands)
    _add_init(commands)
    _add_demo_data(commands)


def _add_import(commands: Any) -> None:
    command = commands.add_parser(
        "import", help="import a trace file, or a tracing server's traces"
    )
    command.add_argument(
        "path",
        help="the trace file (JSON Lines, JSON, CSV, Parquet, OTLP JSON, transcript), or with "
        "--from the server's URL",
    )
    command.add_argument("--format", choices=FORMATS, help="skip detection from content")
    command.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=SOURCE",
        help="take FIELD from a SOURCE path of keys joined by dots, e.g. response=output.text "
        "or request=input.messages.0.content; a key whose name holds dots goes in double "
        "quotes: 'model=\"attributes.llm.model_name\"' (an unquoted SOURCE a row has whole as "
        "one key is that key). A row without SOURCE is rejected; a null is no value "
        "(repeatable)",
    )
    command.add_argument(
        "--context",
        metavar="KINDS",
        help="where a call's context comes from, for traces whose calls it is found in (OTLP, "
        "the tracing tools' exports): any of retrieval,tools,documents,prompt, comma-separated "
        "(default all). The prompt (system instructions, the user's material other than the "
        "final question) counts only for a call with none of the others",
    )
    add_server_options(command, "import")
    common(command)
    command.set_defaults(run=run_import, creates_store=True)


def _add_import_labels(commands: Any) -> None:
    command = commands.add_parser("import-labels", help="append human labels made elsewhere")
    command.add_argument("path", help="the labels file: one row per (trace, claim, reviewer) label")
    command.add_argument("--format", choices=LABEL_FORMATS, help="skip detection from content")
    common(command)
    command.set_defaults(run=run_import_labels, creates_store=True)


def _add_status(commands: Any) -> None:
    command = commands.add_parser("status", help="the store at a glance")
    common(command)
    command.set_defaults(run=run_status)


def _add_errors(commands: Any) -> None:
    command = commands.add_parser("errors", help="every rejected row of one import")
    command.add_argument("import_id", type=int, help="the import's id (annotate status lists them)")
    common(command)
    command.set_defaults(run=run_errors)


def _add_init(commands: Any) -> None:
    command = commands.add_parser("init", help="create the store; load the bundled sample if empty")
    command.add_argument(
        "--sample",
        default=str(SAMPLE_TRACES),
        help="trace file to load when empty (another file than the bundled one: no demo sample, "
        "claims or simulated labels are made)",
    )
    command.add_argument("--no-sample", action="store_true", help="create an empty store")
    common(command, json_flag=False)
    command.set_defaults(run=run_init, creates_store=True)


def _add_demo_data(commands: Any) -> None:
    command = commands.add_parser("demo-data", help="write the deterministic sample traces")
    command.add_argument(
        "--out",
        default="data",
        type=out_dir,
        help="directory to write the files into (default: data)",
    )
    command.set_defaults(run=run_demo_data)


def run_import(args: argparse.Namespace) -> int:
    if args.server:
        return run_pull(args)
    mapping = parse_mapping(args.map)
    context = parse_context_kinds(args.context)
    input_file(args.path)
    return _imported(
        args,
        lambda store: import_traces(
            store,
            args.path,
            args.format,
            mapping,
            progress=_progress_printer(),
            actor=args.actor,
            context=context,
        ),
    )


def run_import_labels(args: argparse.Namespace) -> int:
    input_file(args.path, "annotate import-labels PATH")
    return _imported(
        args,
        lambda store: import_labels(
            store, args.path, args.format, progress=_progress_printer(), actor=args.actor
        ),
    )


def _imported(args: argparse.Namespace, run: Callable[[Store], ImportReport]) -> int:
    """Run an import and print its report. Ctrl-C after the import returned (while the store
    closes, or the report prints) says the file is stored, which it is."""
    report = None
    try:
        with writer(args) as store:
            report = run(store)
        return _finish_import(report, args.json)
    except KeyboardInterrupt as exc:
        if report is None:
            raise
        raise stored_whole(report.import_id, report.path) from exc


def run_status(args: argparse.Namespace) -> int:
    with writer(args) as store:
        status = store_status(store)
    if args.json:
        emit(status)
    else:
        _print_status(status)
    return EXIT_OK


def run_errors(args: argparse.Namespace) -> int:
    with writer(args) as store:
        errors = import_errors(store, args.import_id)
    if args.json:
        emit({"import_id": args.import_id, "errors": [e.as_json() for e in errors]})
    else:
        for error in errors:
            print(error)
    return EXIT_OK


def run_init(args: argparse.Namespace) -> int:
    if args.no_sample and Path(args.sample) != SAMPLE_TRACES:
        raise UsageError("--sample loads a file and --no-sample loads none: give one of them")
    with writer(args) as store:
        traces = store.scalar("SELECT count(*) FROM traces")
        if traces or args.no_sample:
            say(f"{store.path}: ready ({counted(traces, 'trace')})")
            return EXIT_OK
        sample = Path(args.sample)
        if not sample.exists() and sample == SAMPLE_TRACES:
            _write_demo_data(sample.parent)
        report = import_traces(store, sample, progress=_progress_printer(), actor=args.actor)
        say(f"{store.path}: loaded {counted(report.imported, 'sample trace')} from {sample}")
        if sample == SAMPLE_TRACES:
            _draw_demo_sample(store, args.actor)
            _label_demo_sample(store, sample.with_name("sample_truth.jsonl"))
    return EXIT_OK


def _draw_demo_sample(store: Store, actor: Actor) -> None:
    """A ready sample with claims, so a new lead can assign it to themselves and label at once."""
    from annotate.claims.extraction import create_claims
    from annotate.sampling.allocation import SampleSpec
    from annotate.sampling.samples import draw_sample

    # Every stratum gets MIN_PER_DEMO_STRATUM traces, so each of the four features has at least
    # ten labelled traces: the fewest a slice needs for a human rate.
    spec = SampleSpec(name=DEMO_SAMPLE, n=120, seed=7, min_per_stratum=MIN_PER_DEMO_STRATUM)
    plan = draw_sample(store, spec, created_by=actor)
    claims = create_claims(store, DEMO_SAMPLE, extractor="sentences", actor=actor)
    say(
        f"drew the {DEMO_SAMPLE!r} sample: {len(plan.trace_ids)} traces, {claims.created} new claims"
    )


def _label_demo_sample(store: Store, truth: Path) -> None:
    """Three simulated reviewers label the demo sample, so Agreement and Calibration have data."""
    from annotate.demo.labels import LEAD, adjudicate_demo, load_demo_labels

    if truth.exists():
        report = load_demo_labels(store, DEMO_SAMPLE, truth)
        say(f"simulated reviewers sim-ana, sim-ben, sim-cho gave {report.imported} labels")
        decided = adjudicate_demo(store, DEMO_SAMPLE, truth)
        say(f"simulated lead {LEAD} adjudicated {counted(decided, 'disagreement')}")


def run_demo_data(args: argparse.Namespace) -> int:
    for path in _write_demo_data(Path(args.out)):
        say(f"wrote {path}")
    return EXIT_OK


def _write_demo_data(directory: Path) -> tuple[Path, Path]:
    from annotate.demo.generator import write_sample

    return write_sample(directory)


def _finish_import(
    report: ImportReport, as_json: bool, document: dict[str, Any] | None = None
) -> int:
    """The import's document (`document`, else the report's) or its summary, and exit code."""
    if as_json:
        emit(document or report.as_json())
    _print_report(report, say if as_json else print)  # the result on stdout, beside no JSON
    return EXIT_OK if report.is_clean else EXIT_REJECTED


def _print_report(report: ImportReport, result: Any = say) -> None:
    """The import's result through `result` (stdout unless --json); its errors on stderr."""
    attached = f", evaluations attached {report.attached:,}" if report.attached else ""
    result(
        f"{report.path} ({report.format}): imported {report.imported:,}, rejected "
        f"{report.rejected:,}, duplicates {report.duplicates:,}, conflicts {report.conflicts:,}"
        f"{attached} (import {report.import_id})"
    )
    if set(report.context_from) - {"file"}:  # the reader found context, or some has none
        origins = ", ".join(f"{origin} {n:,}" for origin, n in sorted(report.context_from.items()))
        result(f"  context from: {origins}")
    for error in report.errors[:PRINTED_ERRORS]:
        say(f"  {error}")
    for warning in report.warnings[:PRINTED_ERRORS]:
        say(f"  warning: {warning}")
    if report.warned > PRINTED_ERRORS:
        more = counted(report.warned - PRINTED_ERRORS, "more warning")
        say(f"  ... and {more} (--json lists the first {len(report.warnings):,})")
    hidden = report.rejected + report.conflicts - min(len(report.errors), PRINTED_ERRORS)
    if hidden > 0:
        say(f"  ... and more: all are stored; see `annotate errors {report.import_id}`")


def _print_status(status: dict[str, Any]) -> None:
    print(f"traces {status['traces']} (judgeable {status['judgeable']})")
    print(
        f"claims {status['claims']}, judge verdicts {status['judge_verdicts']}, label events {status['label_events']}"
    )
    for key in ("by_feature", "by_risk_category", "by_model"):
        counts = shown(", ".join(f"{name} {count}" for name, count in status[key].items()))
        print(f"{key.replace('_', ' ')}: {counts}")
    for item in status["imports"]:
        print(
            f"import {item['id']}: {shown(item['path'])} imported {item['imported']}, rejected {item['rejected']}"
        )


def _progress_printer() -> Callable[[int, float], None]:
    """Progress on stderr about once a second, only for imports long enough to need it."""
    started = time.monotonic()
    state = {"last": started, "shown": False}
    interactive = sys.stderr.isatty()

    def show(rows: int, fraction: float) -> None:
        now = time.monotonic()
        done = fraction >= 1.0
        if (done and not state["shown"]) or (not done and now - state["last"] < 1.0):
            return
        state.update(last=now, shown=True)
        text = f"  read {rows:,} rows" + (f" ({fraction:.0%} of the file)" if fraction else "")
        end = "\n" if done or not interactive else ""
        sys.stderr.write(("\r" if interactive else "") + text + end)
        sys.stderr.flush()

    return show
