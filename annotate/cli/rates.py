"""The `annotate rates`, `gate`, `plan-labels`, `trend`, `export-rates`, `export-otel`,
`bundle` and `verify-bundle` commands, and `sample show`: parsing and printing only."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from annotate.cli.console import RESAMPLES, SEED, out_file, share, shown
from annotate.cli.rates_details import details_text
from annotate.cli.ratings import add_criterion, run_rating_rates
from annotate.errors import counted, slice_label, stratum_label
from annotate.judge.default import choose_judge
from annotate.rates.active import describe_savings
from annotate.rates.budget import plan_labels, top_up_from_plan
from annotate.rates.bundle import build_bundle, frame_summary, verify_bundle
from annotate.rates.estimate import ESTIMATORS, LEVELS, rate_rows
from annotate.rates.exports import FORMATS, neutralise, record_export, write_export
from annotate.rates.gate import GATE_ESTIMATORS, load_threshold, parse_slices, run_gate
from annotate.rates.inputs import load_inputs
from annotate.rates.otel import export_otel
from annotate.rates.trend import error_types, scores, trend
from annotate.store.samples import sample_units


def _split(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _scope(command: argparse.ArgumentParser, sample_required: bool = True) -> None:
    command.add_argument(
        "--sample", required=sample_required, help="the sample the rates come from"
    )
    command.add_argument(
        "--judge",
        help="the judge whose verdicts are used (default: the current rubric's judge where it "
        "has verdicts on the sample, else the one with most verdicts; named on stderr)",
    )
    command.add_argument("--seed", type=SEED, default=0, help="bootstrap seed")
    command.add_argument("--resamples", type=RESAMPLES, default=1000, help="bootstrap resamples")


def add_rates_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    rates = commands.add_parser(
        "rates", help="hallucination rates per slice, four estimators, with intervals"
    )
    _scope(rates)
    rates.add_argument(
        "--by", help="slice columns: feature, risk_category, model, day, week, month, or attributes"
    )
    rates.add_argument("--level", choices=LEVELS, help="claim or response (default: both)")
    rates.add_argument(
        "--threshold",
        type=share("the threshold"),
        help="alert threshold (default: the saved setting, 0.10)",
    )
    rates.add_argument(
        "--details", action="store_true", help="also error types and the judge's score histogram"
    )
    add_criterion(rates, rates=True)
    common(rates)
    rates.set_defaults(run=lambda args: run_rates(args, writer, emit))

    gate = commands.add_parser("gate", help="exit 0 ok, 1 breach, 5 warning: for release pipelines")
    _scope(gate)
    gate.add_argument(
        "--max-rate", type=float, required=True, help="the highest acceptable rate, e.g. 0.10"
    )
    gate.add_argument(
        "--slice",
        action="append",
        default=[],
        metavar="COLUMN=VALUE",
        help="narrow the scope to one value of a column (repeatable)",
    )
    gate.add_argument("--by", help="gate every slice of these columns (default: the whole scope)")
    gate.add_argument(
        "--level", choices=LEVELS, default="response", help="claim or response (default: response)"
    )
    gate.add_argument(
        "--estimator",
        choices=GATE_ESTIMATORS,
        default="weighted_human",
        help="the estimator gated on (default: weighted_human)",
    )
    common(gate)
    gate.set_defaults(run=lambda args: run_gate_command(args, writer, emit))

    plan = commands.add_parser(
        "plan-labels", help="labels each stratum needs for a target interval width"
    )
    _scope(plan)
    plan.add_argument("--width", type=float, required=True, help="target total width, e.g. 0.04")
    plan.add_argument(
        "--top-up", action="store_true", help="draw the planned traces into the sample"
    )
    plan.add_argument(
        "--with-judge", action="store_true", help="top up to the plan with the judge (PPI)"
    )
    common(plan)
    plan.set_defaults(run=lambda args: run_plan(args, writer, emit))

    window = commands.add_parser("trend", help="rates per day / week / month with a drift alert")
    _scope(window)
    window.add_argument(
        "--window", choices=("day", "week", "month"), default="week", help="window (default: week)"
    )
    window.add_argument(
        "--level", choices=LEVELS, default="response", help="claim or response (default: response)"
    )
    common(window)
    window.set_defaults(run=lambda args: run_trend(args, writer, emit))
    _add_export_commands(commands, common, writer, emit, say)


def _add_export_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    export = commands.add_parser("export-rates", help="sliced rates as CSV, Parquet or JSON")
    _scope(export)
    export.add_argument(
        "--by", default="feature,risk_category", help="slice columns, comma-separated"
    )
    export.add_argument("--format", choices=FORMATS, required=True, help="file format")
    export.add_argument("--out", required=True, type=out_file, help="file to write")
    common(export)
    export.set_defaults(run=lambda args: run_export(args, writer, emit, say))

    otel = commands.add_parser(
        "export-otel", help="append OTel gen_ai.evaluation.result records (JSON Lines)"
    )
    _scope(otel)
    otel.add_argument(
        "--out", required=True, type=out_file, help="JSON Lines file to append the records to"
    )
    common(otel)
    otel.set_defaults(run=lambda args: run_otel(args, writer, emit, say))

    bundle = commands.add_parser(
        "bundle", help="the auditor bundle: one zip to re-derive every rate from"
    )
    _scope(bundle)
    bundle.add_argument(
        "--by", default="feature,risk_category", help="slice columns, comma-separated"
    )
    bundle.add_argument("--out", required=True, type=out_file, help="the zip file to write")
    common(bundle)
    bundle.set_defaults(run=lambda args: run_bundle(args, writer, emit, say))

    verify = commands.add_parser(
        "verify-bundle", help="check a bundle's hashes and recompute its rates"
    )
    verify.add_argument("zip", help="the bundle's zip file")
    verify.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    verify.set_defaults(run=lambda args: run_verify(args, emit, say))


SLICE_CHARS = 100  # a slice label longer than this is cut, with an ellipsis


def print_rows(rows: Sequence[Mapping[str, Any]], out: Any = None) -> None:
    out = out or sys.stdout
    labels = [shown(slice_label(row["slice"])) for row in rows]
    wide = min(max([len("slice"), *map(len, labels)]), SLICE_CHARS)  # whole labels, up to a bound
    print(
        f"{'slice':{wide}} {'level':8} {'estimator':16} {'n':>7} {'rate':>7} {'95% interval':>17}  state",
        file=out,
    )
    for row, label in zip(rows, labels, strict=True):
        if len(label) > wide:
            label = label[: wide - 1] + "…"
        rate = "-" if row["rate"] is None else f"{row['rate']:.1%}"
        span = "" if row["low"] is None else f"[{row['low']:.1%}, {row['high']:.1%}]"
        note = f"  ({row['reason']})" if row.get("reason") else ""
        print(
            f"{label:{wide}} {row['level']:8} {row['estimator']:16} {row['n']:>7} {rate:>7} {span:>17}  {row['state']}{note}",
            file=out,
        )


def run_rates(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    if args.criterion:
        return run_rating_rates(args, writer, emit)
    by, levels = _split(args.by), [args.level] if args.level else list(LEVELS)
    with writer(args) as store:
        threshold = args.threshold if args.threshold is not None else load_threshold(store)
        judge, why = chosen_judge(store, args.sample, args.judge)
        inputs = load_inputs(store, args.sample, by, judge)
        rows = rate_rows(inputs, by, levels, ESTIMATORS, threshold, args.resamples, args.seed)
        document: dict[str, Any] = {"rows": rows, "threshold": threshold, "judge": inputs.judge}
        document["judge_chosen"] = why
        if inputs.unmapped:
            document["unmapped_judge_labels"] = inputs.unmapped
        if args.details:
            document["error_types"] = error_types(inputs, by, args.seed)
            document["scores"] = scores(store, inputs)
    if args.json:
        emit(document)
    else:
        if inputs.judge is not None:
            print(f"judge: {shown(inputs.judge)} ({why})", file=sys.stderr)
        print_rows(rows)
        if args.details:
            print("\n".join(details_text(document)))
    return 0


def chosen_judge(store: Any, sample: str, given: str | None) -> tuple[str | None, str]:
    """The judge a command uses and why: the one given, else annotate.judge.default's choice."""
    if given is not None:
        return given, "given with --judge"
    choice = choose_judge(store, sample)
    if choice.judge is None:  # only verdict counts of traces not drawn: load_inputs takes theirs
        return None, "the judge with the most verdicts in the source's counts"
    return choice.judge, choice.reason


def run_gate_command(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        result = run_gate(
            store, args.sample, args.max_rate, parse_slices(args.slice), _split(args.by),
            args.level, args.estimator, args.judge, args.resamples, args.seed,
        )  # fmt: skip
    if args.json:
        emit(result.as_json())
    else:
        print_rows(result.rows)
        print(shown(result.verdict))
    return result.code


def run_plan(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        plan = plan_labels(load_inputs(store, args.sample, (), args.judge), args.width)
        if args.top_up:
            plan["top_up"] = top_up_from_plan(store, args.sample, plan, args.with_judge, args.actor)
    if args.json:
        emit(plan)
        return 0
    print(
        f"{'stratum':44} {'N_h':>8} {'labelled':>8} {'more, no judge':>15} {'more, with judge':>17}"
    )
    for s in plan["strata"]:
        print(
            f"{shown(stratum_label(s['stratum']))[:44]:44} {s['population']:>8} {s['labelled']:>8} {s['without_judge']['more']:>15} {s['with_judge']['more']:>17}"
        )
    print(
        f"total more: {plan['more_without_judge']} without the judge, {plan['more_with_judge']} with it"
    )
    print(describe_savings(plan["labels_needed"], plan["width"]))
    return 0


def run_trend(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        threshold = load_threshold(store)
        inputs = load_inputs(store, args.sample, [args.window], args.judge)
        found = trend(
            inputs,
            args.window,
            args.level,
            threshold=threshold,
            resamples=args.resamples,
            seed=args.seed,
        )
    if args.json:
        emit(found)
        return 0
    print_rows(found["rows"])
    for d in found["drift"]:
        flag = "DRIFT" if d["alert"] else "no drift"
        test = f"z {d['z']:.2f}, p {d['p']:.3f}" if d["p"] is not None else d["reason"]
        print(f"{d['estimator']}: {d['from']} -> {d['to']}: {d['change']:+.1%} ({test}) {flag}")
    print(f"test: {found['test']}")
    return 0


def run_export(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    by = _split(args.by)
    with writer(args) as store:
        inputs = load_inputs(store, args.sample, by, args.judge)
        rows = rate_rows(
            inputs, by, LEVELS, ESTIMATORS, load_threshold(store), args.resamples, args.seed
        )
        digest = write_export(store, rows, args.format, args.out, args.actor, args.sample)
    if args.json:
        emit({"path": args.out, "rows": len(rows), "sha256": digest})
    say(f"wrote {len(rows)} rates to {args.out} (sha256 {digest})")
    return 0


def run_otel(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        found = export_otel(store, args.sample, args.out, args.judge, args.actor)
    if args.json:
        emit(found)
    say(f"appended {found['records']} evaluation records to {args.out}"
        + (f"; {found['unlinked']} name no OTel span (their traces were not imported from OTLP)" if found["unlinked"] else ""))  # fmt: skip
    return 0


def run_bundle(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        found = build_bundle(
            store, args.sample, args.out, _split(args.by), args.judge, load_threshold(store),
            args.resamples, args.seed, args.actor,
        )  # fmt: skip
    if args.json:
        emit(found)
    say(
        f"wrote the bundle {args.out}: {counted(found['files'], 'file')}, {counted(found['rows'], 'rate')} "
        f"(sha256 {found['sha256']})"
    )
    return 0


def run_verify(args: argparse.Namespace, emit: Any, say: Any) -> int:
    found = verify_bundle(args.zip)
    if args.json:
        emit(
            {"ok": found["ok"], "problems": found["problems"], "notes": found["notes"],
             "rows": found["rows"]}
        )  # fmt: skip
    for problem in found["problems"]:
        say(f"problem: {shown(problem)}")
    for note in found["notes"]:
        say(f"note: {shown(note)}")
    say(
        "bundle verified: every hash matches and the rates recompute exactly"
        if found["ok"]
        else "bundle FAILED verification"
    )
    return 0 if found["ok"] else 1


def _sample_csv(units: Sequence[Mapping[str, Any]]) -> bytes:
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(["trace_id", "stratum", "draw", "inclusion_probability", "weight"])
    for u in units:
        out.writerow(
            [neutralise(u["trace_id"]), neutralise(u["stratum_key"]), u["draw"],
             u["inclusion_probability"], u["weight"]]
        )  # fmt: skip
    return buffer.getvalue().encode()


def run_sample_show(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    """The sample's traces with stratum, inclusion probability and weight, and the frame's
    counts per stratum; --json and --csv are exports (recorded with their hash)."""
    name = args.show_name
    with writer(args) as store:
        summary = frame_summary(store, name)
        units = sample_units(store, name)
        document = {"sample": name, "units": units, "strata": summary["strata"],
                    "frame_size": summary["frame_size"]}  # fmt: skip
        data = b""
        if args.json or args.csv:
            kind = "csv" if args.csv else "json"
            data = (
                _sample_csv(units)
                if args.csv
                else (json.dumps(document, default=str) + "\n").encode()
            )
            record_export(store, args.actor, f"sample.{kind}", data, sample=name)
    if data:
        sys.stdout.write(data.decode())
        return 0
    print(
        f"sample {name!r}: {counted(len(units), 'trace')} from a frame of {summary['frame_size']:,}"
    )
    for s in summary["strata"]:
        stratum = shown(" | ".join(map(str, s["stratum"])))
        print(
            f"  {stratum:40} N_h {s['population']:>8}  n_h {s['sample_size']:>6}  pi {s['inclusion_probability'] or 0:.4f}"
        )
    for u in units:
        print(
            f"  {shown(u['trace_id']):24} {shown(u['stratum_key']):40} pi {u['inclusion_probability']:.4f}  weight {u['weight']:.2f}"
        )
    return 0
