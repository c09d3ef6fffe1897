"""The `annotate` command: argument parsing, exit codes and printing; the work is in the library.

Exit codes: 0 everything imported (or exact duplicates), 1 some rows rejected or
conflicting, 2 usage errors (bad arguments, unreadable or empty file), 3 the store is
locked by another process, 4 an unexpected error (a bug: one line on stderr, the traceback
in the log file it names). With --json one JSON document goes to stdout and every
message to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor, cli_actor
from annotate.cli.agreement import add_agreement_commands
from annotate.cli.claims import add_claims_commands
from annotate.cli.people import add_people_commands
from annotate.cli.samples import add_sample_commands
from annotate.crash_log import EXIT_UNEXPECTED, record_crash
from annotate.errors import AnnotateError, InputError, StoreLockedError, UsageError
from annotate.ingest import FORMATS
from annotate.ingest.importer import ImportReport, import_traces, parse_mapping
from annotate.ingest.labels import LABEL_FORMATS, import_labels
from annotate.store import Store, open_store, resolve_db_path
from annotate.store.imports import import_errors
from annotate.store.status import store_status

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_LOCKED = 0, 1, 2, 3
PRINTED_ERRORS = 20
SAMPLE_TRACES = Path("data") / "sample_traces.jsonl"
DEMO_SAMPLE = "demo"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except StoreLockedError as exc:
        _say(f"error: {exc}")
        return EXIT_LOCKED
    except (UsageError, InputError) as exc:
        _say(f"error: {exc}")
        return EXIT_USAGE
    except AnnotateError as exc:
        _say(f"error: {exc}")
        return EXIT_REJECTED
    except Exception as exc:  # a bug: one line here, the traceback in the log file
        _say("error: " + record_crash(exc, f"annotate {args.command}", _db_of(args)))
        return EXIT_UNEXPECTED


def _db_of(args: argparse.Namespace) -> Path | None:
    try:
        return resolve_db_path(getattr(args, "db", None))
    except Exception:
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="annotate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_import(commands)
    _add_import_labels(commands)
    _add_status(commands)
    _add_errors(commands)
    _add_init(commands)
    _add_demo_data(commands)
    add_sample_commands(commands, _common, _writer, _emit, _say)
    add_people_commands(commands, _common, _writer, _emit, _say)
    add_claims_commands(commands, _common, _writer, _emit, _say)
    add_agreement_commands(commands, _common, _writer, _emit, _say)
    return parser


def _common(command: argparse.ArgumentParser, json_flag: bool = True) -> None:
    command.add_argument("--db", help="DuckDB file (default: $ANNOTATE_DB or data/annotate.duckdb)")
    command.add_argument(
        "--as",
        dest="as_user",
        metavar="NAME",
        help="the account this act is recorded under (default: the OS user)",
    )
    if json_flag:
        command.add_argument(
            "--json", action="store_true", help="print one JSON document on stdout"
        )


def _add_import(commands: Any) -> None:
    command = commands.add_parser("import", help="import a trace file")
    command.add_argument("path")
    command.add_argument("--format", choices=FORMATS, help="skip detection from content")
    command.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=SOURCE",
        help="take FIELD from a nested SOURCE path, e.g. response=output.text (repeatable)",
    )
    _common(command)
    command.set_defaults(run=run_import)


def _add_import_labels(commands: Any) -> None:
    command = commands.add_parser("import-labels", help="append human labels made elsewhere")
    command.add_argument("path")
    command.add_argument("--format", choices=LABEL_FORMATS)
    _common(command)
    command.set_defaults(run=run_import_labels)


def _add_status(commands: Any) -> None:
    command = commands.add_parser("status", help="the store at a glance")
    _common(command)
    command.set_defaults(run=run_status)


def _add_errors(commands: Any) -> None:
    command = commands.add_parser("errors", help="every rejected row of one import")
    command.add_argument("import_id", type=int)
    _common(command)
    command.set_defaults(run=run_errors)


def _add_init(commands: Any) -> None:
    command = commands.add_parser("init", help="create the store; load the bundled sample if empty")
    command.add_argument(
        "--sample", default=str(SAMPLE_TRACES), help="trace file to load when empty"
    )
    command.add_argument("--no-sample", action="store_true", help="create an empty store")
    _common(command, json_flag=False)
    command.set_defaults(run=run_init)


def _add_demo_data(commands: Any) -> None:
    command = commands.add_parser("demo-data", help="write the deterministic sample traces")
    command.add_argument("--out", default="data")
    command.set_defaults(run=run_demo_data)


def run_import(args: argparse.Namespace) -> int:
    mapping = parse_mapping(args.map)
    with _writer(args) as store:
        report = import_traces(
            store, args.path, args.format, mapping, progress=_progress_printer(), actor=args.actor
        )
    return _finish_import(report, args.json)


def run_import_labels(args: argparse.Namespace) -> int:
    with _writer(args) as store:
        report = import_labels(
            store, args.path, args.format, progress=_progress_printer(), actor=args.actor
        )
    return _finish_import(report, args.json)


def run_status(args: argparse.Namespace) -> int:
    with _writer(args) as store:
        status = store_status(store)
    if args.json:
        _emit(status)
    else:
        _print_status(status)
    return EXIT_OK


def run_errors(args: argparse.Namespace) -> int:
    with _writer(args) as store:
        errors = import_errors(store, args.import_id)
    if args.json:
        _emit({"import_id": args.import_id, "errors": [e.as_json() for e in errors]})
    else:
        for error in errors:
            print(error)
    return EXIT_OK


def run_init(args: argparse.Namespace) -> int:
    with _writer(args) as store:
        traces = store.scalar("SELECT count(*) FROM traces")
        if traces or args.no_sample:
            _say(f"{store.path}: ready ({traces} traces)")
            return EXIT_OK
        sample = Path(args.sample)
        if not sample.exists() and sample == SAMPLE_TRACES:
            _write_demo_data(sample.parent)
        report = import_traces(store, sample, progress=_progress_printer(), actor=args.actor)
        _say(f"{store.path}: loaded {report.imported} sample traces from {sample}")
        if sample == SAMPLE_TRACES:
            _draw_demo_sample(store, args.actor)
            _label_demo_sample(store, sample.with_name("sample_truth.jsonl"))
    return EXIT_OK


def _draw_demo_sample(store: Store, actor: Actor) -> None:
    """A ready sample with claims, so a new lead can assign it to themselves and label at once."""
    from annotate.claims.extraction import create_claims
    from annotate.sampling.allocation import SampleSpec
    from annotate.sampling.samples import draw_sample

    plan = draw_sample(store, SampleSpec(name=DEMO_SAMPLE, n=60, seed=7), created_by=actor)
    claims = create_claims(store, DEMO_SAMPLE, extractor="sentences", actor=actor)
    _say(
        f"drew the {DEMO_SAMPLE!r} sample: {len(plan.trace_ids)} traces, {claims.created} new claims"
    )


def _label_demo_sample(store: Store, truth: Path) -> None:
    """Three simulated reviewers label the demo sample, so Agreement and Calibration have data."""
    from annotate.demo.labels import load_demo_labels

    if truth.exists():
        report = load_demo_labels(store, DEMO_SAMPLE, truth)
        _say(f"simulated reviewers sim-ana, sim-ben, sim-cho gave {report.imported} labels")


def run_demo_data(args: argparse.Namespace) -> int:
    for path in _write_demo_data(Path(args.out)):
        _say(f"wrote {path}")
    return EXIT_OK


def _write_demo_data(directory: Path) -> tuple[Path, Path]:
    from annotate.demo.generator import write_sample

    return write_sample(directory)


class _writer:
    """Open the store for writing for one command; a lock held elsewhere fails at once."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.path = resolve_db_path(args.db)
        self.args = args

    def __enter__(self) -> Store:
        self.store = open_store(self.path)
        try:  # every act of the command is recorded under this name
            self.args.actor = cli_actor(self.store, getattr(self.args, "as_user", None))
        except BaseException:
            self.store.close()
            raise
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def _finish_import(report: ImportReport, as_json: bool) -> int:
    if as_json:
        _emit(report.as_json())
    _print_report(report)
    return EXIT_OK if report.is_clean else EXIT_REJECTED


def _print_report(report: ImportReport) -> None:
    attached = f", evaluations attached {report.attached}" if report.attached else ""
    _say(
        f"{report.path} ({report.format}): imported {report.imported}, rejected {report.rejected}, "
        f"duplicates {report.duplicates}, conflicts {report.conflicts}{attached} "
        f"(import {report.import_id})"
    )
    for error in report.errors[:PRINTED_ERRORS]:
        _say(f"  {error}")
    for warning in report.warnings[:PRINTED_ERRORS]:
        _say(f"  warning: {warning}")
    hidden = report.rejected + report.conflicts - min(len(report.errors), PRINTED_ERRORS)
    if hidden > 0:
        _say(f"  ... and more: all are stored; see `annotate errors {report.import_id}`")


def _print_status(status: dict[str, Any]) -> None:
    print(f"traces {status['traces']} (judgeable {status['judgeable']})")
    print(
        f"claims {status['claims']}, judge verdicts {status['judge_verdicts']}, label events {status['label_events']}"
    )
    for key in ("by_feature", "by_risk_category", "by_model"):
        counts = ", ".join(f"{name} {count}" for name, count in status[key].items())
        print(f"{key.replace('_', ' ')}: {counts}")
    for item in status["imports"]:
        print(
            f"import {item['id']}: {item['path']} imported {item['imported']}, rejected {item['rejected']}"
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


def _emit(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, default=str) + "\n")


def _say(message: str) -> None:
    print(message, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
