"""Named samples: plan, draw and top up a seeded stratified sample, and list what exists.

A sample's frame is the judgeable traces that match its filters among those
imported when it was drawn, so a top-up sees the same frame. Each sampled trace
is stored with its stratum, inclusion probability n_h / N_h and weight N_h / n_h.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.errors import counted
from annotate.sampling.allocation import (
    STRATUM_COLUMNS,
    Filters,
    SampleError,
    SampleSpec,
    StratumPlan,
    allocate,
    allocation_weights,
)
from annotate.sampling.drawn import (
    Plan,
    Ranks,
    _check_columns_have_values,
    _sample_record,
    _sizes,
    _store_draw,
    check_name_free,
    check_spec_shape,
    excluded_counts,
    judge_outcomes,
)
from annotate.sampling.sources import Source, SourceFrame
from annotate.store import Store
from annotate.store import samples as sql
from annotate.store.frame_verdicts import add_signatures


def plan_sample(store: Store, spec: SampleSpec, snapshot: int | None = None) -> Plan:
    """The per-stratum N_h, n_h and inclusion probability, before anything is stored."""
    check_name_free(store, spec.name)
    inputs = sql.plan_inputs(store)
    snapshot = sql.max_import_id(store) if snapshot is None else snapshot
    counts, frame_size, excluded = frame_strata(store, spec, snapshot)
    sizes = _sizes(spec, counts)
    strata = [
        StratumPlan(key, population, size, rate)
        for (key, population, rate), size in zip(counts, sizes, strict=True)
    ]
    return Plan(spec, frame_size, excluded, strata, snapshot, inputs=inputs)


def frame_strata(
    store: Store, spec: SampleSpec, snapshot: int
) -> tuple[list[tuple[Any, int, float | None]], int, dict[str, int]]:
    """The frame's strata (values, N_h, judge rate), its size, and what was excluded and why."""
    _check_spec(store, spec)
    counts = sql.strata_counts(store, spec.filters, spec.by, snapshot, judge_outcomes(store))
    total, judgeable, replays = sql.trace_totals(store, snapshot)
    frame_size = sum(population for _, population, _ in counts)
    if frame_size == 0:
        raise SampleError(
            f"the frame is empty: none of the {judgeable} judgeable traces (of {total}) match "
            "the filters; widen or drop --where"
        )
    _check_columns_have_values(spec, counts)
    return counts, frame_size, excluded_counts(total - judgeable, judgeable - frame_size, replays)


def _check_spec(store: Store, spec: SampleSpec) -> None:
    check_spec_shape(spec)
    names = list(spec.by) + list(spec.filters.attributes)
    for name in names:
        if name not in STRATUM_COLUMNS and not sql.has_attribute(store, name):
            known = ", ".join([*STRATUM_COLUMNS, *sql.attribute_names(store)])
            raise SampleError(f"unknown column or attribute {name!r}; use one of: {known}")


def draw_sample(
    store: Store,
    spec: SampleSpec,
    created_by: Actor | str | None = None,
    plan: Plan | None = None,
) -> Plan:
    """Plan, draw and store a new named sample, in one transaction; `created_by` is the actor
    (the signed-in user; None: the OS user). `plan` (from plan_sample, e.g. the preview a
    lead saw) is drawn as it is when nothing it read has changed since; else it is redone."""
    who = as_actor(created_by)
    with store.transaction():
        check_name_free(store, spec.name)
        if plan is None or plan.spec != spec or plan.inputs != sql.plan_inputs(store):
            plan = plan_sample(store, spec)
        sql.insert_sample(store, _sample_record(plan, who.name))
        _store_draw(store, plan, [(s.values, 0, s.sample) for s in plan.strata], who.name)
        record_act(store, who, "sample", spec.name, traces=len(plan.trace_ids), seed=spec.seed)
    return plan


def top_up(
    store: Store,
    name: str,
    extra: int,
    created_by: Actor | str | None = None,
    per_stratum: Mapping[tuple[Any, ...], int] | None = None,
) -> Plan:
    """Draw `extra` more traces into a sample: next in hash order, never a repeat.

    `per_stratum` (stratum values -> traces to add) replaces the allocation: a label budget's
    plan says how many each stratum needs (annotate.rates.budget)."""
    if extra <= 0:
        raise SampleError(f"--top-up must be a positive number of traces, got {extra}")
    with store.transaction():
        row = known_sample(store, name)
        if row["allocation"] == "active":
            raise SampleError(
                f"{name!r} was drawn actively: its top-up recomputes the probabilities from the "
                "gold so far (annotate sample --name NAME --top-up K; rates.active.top_up_active)"
            )
        if row["allocation"] == "canary":
            raise SampleError(
                f"{name!r} is the labelling queue of a canary suite: it grows by itself when "
                "replayed responses scored 'neither' are imported (annotate canary import)"
            )
        spec = _spec_from_row(row)
        current = {key: size for key, _, size, _ in sql.stored_strata(store, name)}
        ranks: Ranks | None = None
        if row.get("source") and row["source"].get("counts"):
            raise SampleError(
                f"{name!r} was drawn by a warehouse (--from-counts): emit its SQL again with a "
                "larger --n and record a new sample"
            )
        if row.get("source"):  # drawn in place: the frame is the files', read again
            deepest = max(current.values(), default=0) + (
                extra if per_stratum is None else max(per_stratum.values(), default=0)
            )  # no stratum grows past its current size plus the top-up's
            frame = SourceFrame(store, Source.from_json(row["source"]), spec, deepest)
            counts, frame_size, excluded = frame.strata(outcomes=judge_outcomes(store))
            ranks = frame.ranks
        else:
            counts, frame_size, excluded = frame_strata(store, spec, row["max_import_id"])
        floors = [current.get(key, 0) for key, _, _ in counts]
        populations = [population for _, population, _ in counts]
        left = frame_size - sum(floors)
        if per_stratum is None and extra > left:
            raise SampleError(
                f"{name!r} has {counted(left, 'trace')} of its frame not yet drawn; a top-up of {extra} "
                f"is more: ask for at most {left}"
            )
        allocation = "proportional" if spec.allocation == "explicit" else spec.allocation
        weights = allocation_weights(allocation, populations, [rate for _, _, rate in counts])
        if per_stratum is None:
            sizes = allocate(
                sum(floors) + extra, populations, weights, spec.min_per_stratum, floors
            )
        else:
            sizes = [
                min(population, floor + per_stratum.get(key, 0))
                for (key, population, _), floor in zip(counts, floors, strict=True)
            ]
        strata = [
            StratumPlan(key, population, size, rate)
            for (key, population, rate), size in zip(counts, sizes, strict=True)
        ]
        plan = Plan(spec, frame_size, excluded, strata, row["max_import_id"])
        ranges = [(s.values, low, s.sample) for s, low in zip(plan.strata, floors, strict=True)]
        who = as_actor(created_by)
        if ranks is not None:
            units = ranks(ranges)
            frame.import_drawn(units, who)
            ranks = lambda _ranges: units  # noqa: E731 - drawn once, imported, then stored
        _store_draw(store, plan, ranges, who.name, ranks)
        if row.get("source"):  # its new traces are in; the frame traces still undrawn
            sql.set_max_import_id(store, name, sql.max_import_id(store))
            add_signatures(store, name, frame.undrawn_signatures(sample_trace_ids(store, name)))
            frame.close()  # the frame's temporary table (a failure's rollback drops it)
        record_act(store, who, "top_up", name, added=len(plan.trace_ids))
    return plan


def _spec_from_row(row: dict[str, Any]) -> SampleSpec:
    return SampleSpec(
        name=row["name"],
        n=None,
        by=tuple(row["by_columns"]),
        allocation=row["allocation"],
        min_per_stratum=row["min_per_stratum"],
        seed=row["seed"],
        filters=Filters.from_json(row["filters"]),
        sizes={},
    )


def list_samples(store: Store) -> list[dict[str, Any]]:
    return sql.list_samples(store)


def sample_trace_ids(store: Store, name: str) -> list[str]:
    return [unit["trace_id"] for unit in sql.sample_units(store, name)]


SHOWN_NAMES = 10  # the samples a "no sample named" message lists


def known_sample(store: Store, name: str) -> dict[str, Any]:
    """The stored sample `name`. A name that does not exist is a usage error naming those that
    do (canary suites' queues included: they are samples too), so a typo is not an empty result."""
    row = sql.sample_row(store, name)
    if row is not None:
        return row
    names = sql.sample_names(store)
    if not names:
        raise SampleError(
            f"no sample named {name!r}: there are no samples yet; draw one with `annotate sample`"
        )
    more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
    raise SampleError(
        f"no sample named {name!r}; the samples are {', '.join(map(repr, names[:SHOWN_NAMES]))}"
        f"{more} "
        "(`annotate samples` lists them)"
    )


def known_sample_traces(store: Store, name: str) -> list[str]:
    """The trace ids of sample `name`, which must exist (known_sample) and hold traces."""
    trace_ids = sample_trace_ids(store, name)
    if not trace_ids:
        known_sample(store, name)
        raise SampleError(f"sample {name!r} holds no traces yet")
    return trace_ids


def sample_units(store: Store, name: str) -> list[dict[str, Any]]:
    return sql.sample_units(store, name)
