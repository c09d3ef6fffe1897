"""The `annotate sample` and `annotate samples` commands: parsing and printing only."""

from __future__ import annotations

import argparse
import json
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from annotate.accounts.activity import may_act
from annotate.cli.connectors import add_server_options, run_sample_from
from annotate.cli.console import SEED
from annotate.errors import counted
from annotate.ingest import input_file
from annotate.ingest.importer import parse_mapping
from annotate.sampling.allocation import (
    ALLOCATIONS,
    DEFAULT_BY,
    NO_VALUE,
    SampleError,
    SampleSpec,
    parse_sizes,
    parse_where,
)
from annotate.sampling.drawn import Plan
from annotate.sampling.offered import ACTIVE, DIALECTS
from annotate.sampling.results import draw_from_results
from annotate.sampling.samples import draw_sample, list_samples, plan_sample, top_up
from annotate.sampling.sources import (
    SOURCE_FORMATS,
    draw_from_source,
    make_source,
    matched_files,
)

if TYPE_CHECKING:
    from annotate.sampling.active import ActiveDraw


def add_sample_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser(
        "sample", help="plan or draw a stratified random sample, or top one up"
    )
    command.add_argument(
        "action", nargs="?", choices=["show"], help="show NAME: the sample's traces and strata"
    )
    command.add_argument(
        "show_name", nargs="?", metavar="NAME", help="with show: the sample to show"
    )
    command.add_argument("--csv", action="store_true", help="with show: the traces as CSV")
    command.add_argument("--name", help="the sample's name (a new one, or the one to top up)")
    command.add_argument("--n", type=int, help="total traces to draw")
    command.add_argument(
        "--by", default=",".join(DEFAULT_BY), help="stratum columns or attributes, comma-separated"
    )
    command.add_argument(
        "--allocation",
        choices=(*ALLOCATIONS, ACTIVE),
        default="proportional",
        help="how n is shared among strata (active: per trace, following a judge's uncertainty)",
    )
    command.add_argument(
        "--judge",
        metavar="NAME[,OTHER]",
        help="with --allocation active: the judge whose uncertainty the draw follows (a second "
        "judge: their disagreement where neither score nor gold says more)",
    )
    command.add_argument(
        "--budget",
        type=int,
        help="with --allocation active: the labels expected (sum of the probabilities; default --n)",
    )
    command.add_argument(
        "--min-per-stratum",
        type=int,
        default=1,
        help="the fewest traces a stratum gets (default 1)",
    )
    command.add_argument("--seed", type=SEED, help="default: a random seed, stored and printed")
    command.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="NAME=VALUE[,VALUE]",
        help="filter: feature/risk_category/model, since/until (ISO), judge=LABEL, or an attribute",
    )
    command.add_argument(
        "--sizes", help='explicit allocation: JSON {"billing_qa|financial": 20, ...}'
    )
    command.add_argument("--plan-only", action="store_true", help="show the plan; store nothing")
    command.add_argument(
        "--top-up", type=int, metavar="K", help="draw K more into the existing sample NAME"
    )
    command.add_argument(
        "--source",
        metavar="GLOB_OR_FILE",
        help="sample trace files in place (Parquet, JSON Lines, CSV; globs, hive partitions): "
        "only the drawn traces are imported",
    )
    command.add_argument(
        "--source-format",
        choices=SOURCE_FORMATS,
        help="with --source: skip detection from the name",
    )
    command.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=SOURCE",
        help="with --source: read a trace field from another column (dotted: a struct field)",
    )
    command.add_argument(
        "--emit-sql",
        choices=DIALECTS,
        help="print the counts query and the rows query for a warehouse; store nothing",
    )
    command.add_argument(
        "--table", help="with --emit-sql: the table or view (trace_id, strata, judgeable)"
    )
    command.add_argument(
        "--judge-label",
        action="store_true",
        help="with --emit-sql: the table has a judge_label column; count it per stratum",
    )
    add_server_options(command, "sample", with_url=True)
    command.add_argument("--from-counts", metavar="COUNTS.csv", help="the counts query's result")
    command.add_argument("--from-rows", metavar="ROWS.parquet", help="the rows query's result")
    command.add_argument(
        "--judge-name",
        default="",
        help="with --from-counts: the judge whose verdicts judge_label holds (default: imported)",
    )
    common(command)
    command.set_defaults(
        run=lambda args: run_sample(args, writer, emit, say),
        # drawn from files in place or from a warehouse's results: the store may be new
        creates_store=lambda args: bool(
            args.source or args.emit_sql or args.from_counts or args.server
        ),
    )

    listing = commands.add_parser("samples", help="the samples drawn so far, with their parameters")
    common(listing)
    listing.set_defaults(run=lambda args: run_samples(args, writer, emit))


def spec_from_args(args: argparse.Namespace) -> SampleSpec:
    sizes = {}
    if args.sizes:
        try:
            sizes = parse_sizes(json.loads(args.sizes))
        except (ValueError, TypeError, AttributeError):
            raise SampleError(
                '--sizes must be a JSON object like {"billing_qa|financial": 20}'
            ) from None
    if args.allocation == "explicit" and not sizes:
        raise SampleError("--allocation explicit needs --sizes")
    if args.allocation != "explicit" and args.n is None:
        raise SampleError("give the sample size with --n")
    return SampleSpec(
        name=args.name,
        n=args.n,
        by=tuple(part.strip() for part in args.by.split(",") if part.strip()),
        allocation=args.allocation,
        min_per_stratum=args.min_per_stratum,
        seed=args.seed if args.seed is not None else secrets.randbelow(2**31),
        filters=parse_where(args.where),
        sizes=sizes,
    )


def run_sample(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    if args.action == "show":
        if not args.show_name:
            raise SampleError("give the sample to show: annotate sample show NAME")
        from annotate.cli.rates import run_sample_show

        return run_sample_show(args, writer, emit)
    if args.emit_sql:
        return run_emit_sql(args, emit)
    if not args.name:
        raise SampleError("give the sample a --name")
    if bool(args.from_counts) != bool(args.from_rows):
        raise SampleError("--from-counts and --from-rows go together: the two queries' results")
    if args.top_up is not None:
        _check_top_up_flags(args)
        with writer(args) as store:
            if not args.plan_only:
                may_act(args.actor, "top_up")  # an auditor's --as: refused before any work
            from annotate.rates.active import is_active, top_up_active  # pandas: when used

            if is_active(store, args.name):
                return _said(args, emit, say, top_up_active(
                    store, args.name, args.top_up, args.actor, args.plan_only))  # fmt: skip
            plan = _stored_unless(
                args.plan_only,
                store,
                lambda: top_up(store, args.name, args.top_up, created_by=args.actor),
            )
    elif args.allocation == ACTIVE:
        return _said(args, emit, say, _draw_active(args, writer))
    else:
        plan = _draw(args, writer)
    if args.json:
        emit(plan.as_json())
    say(describe_plan(plan, stored=not args.plan_only))
    return 0


def _draw(args: argparse.Namespace, writer: Any) -> Plan:
    """A new sample. Its spec and the files it reads are checked before the store is opened: a
    draw from files or a warehouse's results may create the store, and a typo creates none."""
    spec = spec_from_args(args)
    if args.server:
        return run_sample_from(args, spec)
    source = None
    if args.from_counts:
        input_file(args.from_counts, "annotate sample --from-counts COUNTS.csv --from-rows ...")
        matched_files(args.from_rows, "--from-rows")
    elif args.source:
        source = make_source(args.source, args.source_format, parse_mapping(args.map))
        matched_files(source.path)
    with writer(args) as store:
        if not args.plan_only:
            may_act(args.actor, "sample")  # an auditor's --as: refused before the frame is read
        if args.from_counts:
            return _stored_unless(
                args.plan_only,
                store,
                lambda: draw_from_results(
                    store, spec, args.from_counts, args.from_rows, args.actor,
                    judge=args.judge_name,
                ),
            )  # fmt: skip
        if source is not None:
            return draw_from_source(store, spec, source, args.actor, plan_only=args.plan_only)
        if args.plan_only:
            return plan_sample(store, spec)
        return draw_sample(store, spec, created_by=args.actor)


def _draw_active(args: argparse.Namespace, writer: Any) -> ActiveDraw:
    if not args.judge:
        raise SampleError("--allocation active follows a judge: give --judge NAME")
    if args.source or args.from_counts:
        raise SampleError(
            "--allocation active needs every frame trace's judge verdicts in the store: import "
            "the traces, then draw without --source / --from-counts"
        )
    if args.budget is None and args.n is None:
        raise SampleError("give the labels to expect with --budget (or --n)")
    args.n = args.budget if args.budget is not None else args.n
    spec = spec_from_args(args)
    judges = [j.strip() for j in args.judge.split(",") if j.strip()]
    from annotate.rates.active import draw_active_sample  # pandas: only an active draw's

    with writer(args) as store:
        if not args.plan_only:
            may_act(args.actor, "sample")
        return draw_active_sample(store, spec, judges, spec.n, args.actor, args.plan_only)


def _said(args: argparse.Namespace, emit: Any, say: Any, drawn: ActiveDraw) -> int:
    if args.json:
        emit(drawn.as_json())
    say(describe_active(drawn, stored=not args.plan_only))
    return 0


def describe_active(drawn: ActiveDraw, stored: bool) -> str:
    from annotate.sampling.active import ACTIVE_HASH_RULE

    pi = drawn.probabilities["pi"]
    return "\n".join([
        describe_plan(drawn.plan, stored),
        f"  active draw {drawn.draw} on judge {drawn.judge}: probabilities follow {drawn.basis}; "
        f"floor weight {drawn.floor_weight:g} (chosen by the planner); expected labels "
        f"{drawn.budget:.1f}; pi from {pi.min():.4f} to {pi.max():.4f}; {ACTIVE_HASH_RULE}",
    ])  # fmt: skip


def _check_top_up_flags(args: argparse.Namespace) -> None:
    """A top-up grows the sample as it was drawn: flags that would draw differently are not
    taken silently."""
    given = {
        "--n": args.n is not None,
        "--seed": args.seed is not None,
        "--by": args.by != ",".join(DEFAULT_BY),
        "--allocation": args.allocation != "proportional",
        "--min-per-stratum": args.min_per_stratum != 1,
        "--where": bool(args.where),
        "--sizes": bool(args.sizes),
        "--source": bool(args.source),
        "--judge": bool(args.judge),
        "--budget": args.budget is not None,
    }
    ignored = [flag for flag, present in given.items() if present]
    if ignored:
        raise SampleError(
            f"--top-up grows {args.name!r} as it was drawn (its seed, strata, allocation and "
            f"filters); leave out {', '.join(ignored)}"
        )


class _NothingStored(Exception):
    """Raised inside a --plan-only transaction so that it rolls back; carries the plan."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan


def _stored_unless(plan_only: bool, store: Any, draw: Callable[[], Plan]) -> Plan:
    """`draw()`; with --plan-only, in a transaction rolled back after it: the plan it would
    store (a top-up, a warehouse draw), and nothing of it stored, its act included."""
    if not plan_only:
        return draw()
    try:
        with store.transaction():
            raise _NothingStored(draw())
    except _NothingStored as rolled_back:
        return rolled_back.plan


def run_emit_sql(args: argparse.Namespace, emit: Any) -> int:
    if not args.table:
        raise SampleError("--emit-sql needs --table NAME: the table or view holding the traces")
    args.name = args.name or "warehouse"
    spec = spec_from_args(args)
    from annotate.sampling.warehouse import emit as emit_queries  # sqlglot: only here

    counts, rows = emit_queries(spec, args.table, args.emit_sql, args.judge_label)
    if args.json:
        emit({"dialect": args.emit_sql, "seed": spec.seed, "counts": counts, "rows": rows})
        return 0
    print(f"-- 1. the frame's counts per stratum (save as CSV for --from-counts); seed {spec.seed}")
    print(counts + ";")
    print(
        "-- 2. the drawn rows, the first of each stratum in hash order (save as Parquet for --from-rows)"
    )
    print(rows + ";")
    return 0


def describe_plan(plan: Plan, stored: bool) -> str:
    spec = plan.spec
    head = (
        f"sample {spec.name!r}: seed {spec.seed}, {spec.allocation}, frame {counted(plan.frame_size, 'trace')} "
        f"(excluded: {', '.join(f'{k} {v}' for k, v in plan.excluded.items())}); "
        f"{plan.total} in the sample" + ("" if stored else " (plan only, nothing stored)")
    )
    lines = [head, f"  {'stratum':40} {'N_h':>8} {'n_h':>6} {'pi':>8}"]
    for stratum in plan.strata:
        label = " | ".join(NO_VALUE if v is None else v for v in stratum.values)
        lines.append(
            f"  {label:40} {stratum.population:>8} {stratum.sample:>6} {stratum.inclusion_probability:>8.4f}"
        )
    if stored and plan.trace_ids:
        lines.append(f"  drew {counted(len(plan.trace_ids), 'trace')}")
    return "\n".join(lines)


def run_samples(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        rows = list_samples(store)
    if args.json:
        emit({"samples": rows})
        return 0
    for row in rows:
        print(
            f"{row['name']}: {counted(row['drawn'], 'trace')} in {counted(row['draws'], 'draw')}, seed {row['seed']}, "
            f"by {','.join(row['by_columns'])}, {row['allocation']}, frame {row['frame_size']}, "
            f"filters {json.dumps(row['filters'])}, by {row['created_by']} at {row['created_at']:%Y-%m-%d %H:%M}"
        )
    return 0
