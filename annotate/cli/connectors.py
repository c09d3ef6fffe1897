"""The tracing-server side of `annotate import --from`, `annotate sample --from` and the
`annotate export-feedback` command: arguments, progress on stderr, the report printed."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from annotate.cli.console import EXIT_OK, EXIT_REJECTED, common, emit, say, shown, writer
from annotate.connectors import KINDS
from annotate.errors import UsageError, counted

if TYPE_CHECKING:
    from annotate.connectors.pull import PullReport

PRINTED_ERRORS = 20


def moment(text: str) -> datetime:
    """An argparse type: an ISO date or time, UTC unless it says otherwise."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an ISO date or time such as 2026-03-01 or 2026-03-01T12:00, got {text!r}"
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def add_server_options(command: argparse.ArgumentParser, verb: str, with_url: bool = False) -> None:
    """--from, --project / --experiment, --since / --until (import: the URL is PATH; sample:
    `--from KIND URL`)."""
    if with_url:
        command.add_argument(
            "--from",
            dest="server",
            nargs=2,
            metavar=("KIND", "URL"),
            help=f"{verb} a tracing server's trace list: phoenix URL or mlflow TRACKING_URI; "
            "only the drawn traces are fetched and imported",
        )
    else:
        command.add_argument(
            "--from",
            dest="server",
            choices=KINDS,
            help=f"{verb} a tracing server's traces: PATH is then its URL (Phoenix: "
            "http://localhost:6006; MLflow: its tracking URI)",
        )
    command.add_argument("--project", help="the Phoenix project (with --from phoenix)")
    command.add_argument("--experiment", help="the MLflow experiment (with --from mlflow)")
    command.add_argument(
        "--server-filter",
        metavar="FILTER",
        help="MLflow: its own search_traces filter, ANDed with the window, e.g. \"tags.env = 'prod'\"",
    )
    command.add_argument("--since", type=moment, help="traces started at or after this time")
    command.add_argument("--until", type=moment, help="traces started before this time")


def server_of(args: argparse.Namespace, url: str) -> Any:
    if isinstance(args.server, list):  # sample: --from KIND URL
        kind, url = args.server
        if kind not in KINDS:
            raise UsageError(f"--from {kind}: use one of {', '.join(KINDS)}")
        args.server = kind
    name = args.project if args.server == "phoenix" else args.experiment
    other = args.experiment if args.server == "phoenix" else args.project
    if other:
        flag = "--experiment" if args.server == "phoenix" else "--project"
        raise UsageError(f"{flag} is for the other server; with --from {args.server} use "
                         f"{'--project' if args.server == 'phoenix' else '--experiment'}")  # fmt: skip
    from annotate.connectors.connect import connect  # a server's client loads only when used

    return connect(args.server, url, name or "", getattr(args, "server_filter", None))


def run_pull(args: argparse.Namespace) -> int:
    if args.map or args.format:
        raise UsageError("--map and --format are for files; a server's traces come as its spans")
    from annotate.connectors.pull import pull
    from annotate.ingest.call_context import parse_context_kinds

    context = parse_context_kinds(args.context)
    server = server_of(args, args.path)
    with writer(args) as store:
        report = pull(store, server, args.since, args.until, _progress, args.actor, context=context)
    if args.json:
        emit(report.as_json())
    else:
        _print_pull(report)
    return EXIT_REJECTED if report.errors else EXIT_OK


def _progress(done: int, total: int) -> None:
    say(f"pulled {done:,} of {total:,} new traces")


def _print_pull(report: PullReport) -> None:
    print(
        f"{shown(report.source)}: {counted(report.listed, 'trace')} listed, "
        f"{report.known:,} pulled before, {report.pulled:,} pulled now: "
        f"{counted(report.imported, 'call')} imported, {report.duplicates:,} already stored, "
        f"{counted(len(report.errors), 'bad span')} reported"
    )
    _print_traces("  ", report.without_call, "held no model call with an answer")
    for trace, field, message in report.errors[:PRINTED_ERRORS]:
        print(f"  trace {shown(trace)}: {shown(field)} {shown(message)}")
    if len(report.errors) > PRINTED_ERRORS:
        print(f"  ... and {len(report.errors) - PRINTED_ERRORS:,} more (`annotate errors ID`)")


def add_connector_commands(commands: Any, *_: Any) -> None:
    command = commands.add_parser(
        "export-feedback",
        help="send a sample's human gold, judge verdicts and calibration card to Phoenix or MLflow",
    )
    command.add_argument(
        "--to", dest="server", choices=KINDS, required=True, help="the tracing server"
    )
    command.add_argument("url", help="its URL (Phoenix) or tracking URI (MLflow)")
    command.add_argument("--sample", required=True, help="the sample whose verdicts go back")
    command.add_argument("--project", help="the Phoenix project its traces came from")
    command.add_argument("--experiment", help="the MLflow experiment its traces came from")
    command.add_argument(
        "--judge", help="whose verdicts go as LLM ones (default: the judge with most verdicts)"
    )
    command.add_argument(
        "--dry-run", action="store_true", help="count what would be sent; send nothing"
    )
    common(command)
    command.set_defaults(run=run_export_feedback)


def run_export_feedback(args: argparse.Namespace) -> int:
    from annotate.connectors.push import plan_push, push

    server = server_of(args, args.url)
    with writer(args) as store:
        if args.dry_run:
            plan = plan_push(store, server, args.sample, args.judge)
        else:
            plan = push(store, server, args.sample, args.judge, args.actor)
    found = plan.as_json()
    if args.json:
        emit({**found, "sent": not args.dry_run})
        return EXIT_OK
    verb = "would send" if args.dry_run else "sent"
    print(
        f"{shown(plan.destination)}: {verb} {counted(found['human'], 'human verdict')} and "
        f"{counted(found['llm'], 'judge verdict')}; {found['unchanged']:,} unchanged since the "
        f"last export; calibration card {'sent' if plan.card_changed and not args.dry_run else 'unchanged' if not plan.card_changed else 'to send'}"
    )
    _print_traces("", plan.elsewhere, "of the sample did not come from this server")
    return EXIT_OK


def _print_traces(indent: str, traces: list[str], what: str) -> None:
    """One line: how many traces `what`, and the first few of them by id."""
    if traces:
        names = ", ".join(shown(t) for t in traces[:PRINTED_ERRORS])
        print(f"{indent}{counted(len(traces), 'trace')} {what}: {names}")


def run_sample_from(args: argparse.Namespace, spec: Any) -> Any:
    """`annotate sample --from KIND URL`: the plan drawn (and stored, unless --plan-only)."""
    from annotate.connectors.sample import draw_from_server, plan_from_server

    if args.where or args.source or args.from_counts or args.top_up is not None:
        raise UsageError(
            "--from draws a new sample from the server's trace list: --where, --source, "
            "--from-counts and --top-up are for traces in the store or in files (use --since "
            "and --until for the server's window)"
        )
    server = server_of(args, "")
    if args.plan_only:
        return plan_from_server(server, spec, args.since, args.until)[0]
    with writer(args) as store:
        plan, report, missing = draw_from_server(
            store, server, spec, args.since, args.until, args.actor
        )
    say(
        f"fetched {counted(report.pulled, 'drawn trace')} of {report.listed:,} listed: {counted(report.imported, 'call')} imported"
    )
    if missing:
        say(
            f"{counted(len(missing), 'drawn trace')} held no judgeable call and were left out: {', '.join(shown(m) for m in missing[:PRINTED_ERRORS])}"
        )
    return plan
