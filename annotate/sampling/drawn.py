"""What a draw is and where it is recorded: the plan, the name check, the judge outcomes a
frame counts, the per-stratum sizes, and storing the drawn units. Shared by samples.py (drawn
from the store) and sources.py (drawn in place from files), apart from both so that neither
imports the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotate.judge.labels import mapping_rows
from annotate.sampling.allocation import (
    ALLOCATIONS,
    HASH_RULE,
    SampleError,
    SampleSpec,
    StratumPlan,
    allocate,
    allocation_weights,
    explicit_sizes,
)
from annotate.store import Store
from annotate.store import samples as sql

Ranks = Callable[
    [list[tuple[Any, int, int]]], list[tuple[str, Any, int]]
]  # a draw's units by range


@dataclass
class Plan:
    spec: SampleSpec
    frame_size: int
    excluded: dict[str, int]
    strata: list[StratumPlan]
    max_import_id: int
    trace_ids: list[str] = field(default_factory=list)
    inputs: tuple[Any, ...] = ()  # what the plan read (sql.plan_inputs): still valid if equal

    @property
    def total(self) -> int:
        return sum(stratum.sample for stratum in self.strata)

    def as_json(self) -> dict[str, Any]:
        """The `annotate sample --json` document; its names are a contract."""
        return {
            "name": self.spec.name,
            "seed": self.spec.seed,
            "frame_size": self.frame_size,
            "excluded": self.excluded,
            "strata": [stratum.as_json(self.spec.by) for stratum in self.strata],
            "trace_ids": self.trace_ids,
        }


CANARY_PREFIX = "canary:"  # a canary suite's queue of replays (annotate.canary.suite)


def check_name_free(store: Store, name: str) -> None:
    """A new sample's name: not taken, and not a canary suite's queue, whose replays would
    be added to it."""
    if name.startswith(CANARY_PREFIX):
        raise SampleError(
            f"sample names starting with {CANARY_PREFIX!r} are kept for canary suites' queues; "
            "pick another --name"
        )
    if sql.sample_row(store, name) is not None:
        raise SampleError(
            f"a sample named {name!r} exists; pick another --name, or --top-up that sample"
        )


def judge_outcomes(store: Store) -> list[tuple[str, str, str]]:
    """(judge, label, outcome) for every mapped label any judge used (the stored mapping)."""
    return [
        (row["judge"], row["label"], row["outcome"])
        for row in mapping_rows(store)
        if row["outcome"] is not None
    ]


def excluded_counts(no_context: int, filtered_out: int, canary_replay: int = 0) -> dict[str, int]:
    """What a frame left out, by reason (`annotate sample --json`'s `excluded`): traces without
    context, those the filters removed, and canary replays (never in a frame). Files read in
    place or a warehouse's results hold no replays."""
    return {"no_context": no_context, "filtered_out": filtered_out, "canary_replay": canary_replay}


def _sizes(spec: SampleSpec, counts: list[tuple[Any, int, float | None]]) -> list[int]:
    keys = [key for key, _, _ in counts]
    populations = [population for _, population, _ in counts]
    if spec.allocation == "explicit":
        return explicit_sizes(keys, populations, spec.sizes)
    if spec.n is None or spec.n <= 0:
        raise SampleError(f"n must be a positive number of traces, got {spec.n}")
    weights = allocation_weights(spec.allocation, populations, [rate for _, _, rate in counts])
    return allocate(spec.n, populations, weights, spec.min_per_stratum)


def _check_columns_have_values(
    spec: SampleSpec, counts: list[tuple[Any, int, float | None]]
) -> None:
    for index, name in enumerate(spec.by):
        if all(key[index] is None for key, _, _ in counts):
            raise SampleError(
                f"stratum column {name!r} has no values in the frame; stratify by another column"
            )


def _store_draw(
    store: Store,
    plan: Plan,
    ranges: list[tuple[Any, int, int]],
    created_by: str,
    ranks: Ranks | None = None,
) -> None:
    spec = plan.spec
    if ranks is not None:
        units = ranks(ranges)
    else:
        units = sql.draw_ranks(store, spec.filters, spec.by, plan.max_import_id, spec.seed, ranges)
    sql.replace_strata(
        store, spec.name, [(s.values, s.population, s.sample, s.judge_rate) for s in plan.strata]
    )
    sql.add_units(store, spec.name, sql.next_draw(store, spec.name), units, created_by)
    sql.refresh_probabilities(store, spec.name)
    plan.trace_ids = [trace_id for trace_id, _, _ in units]


def _sample_record(plan: Plan, created_by: str, source: Any = None) -> dict[str, Any]:
    spec = plan.spec
    return {
        "name": spec.name,
        "seed": spec.seed,
        "by": list(spec.by),
        "allocation": spec.allocation,
        "min_per_stratum": spec.min_per_stratum,
        "filters": spec.filters.as_json(),
        "frame_size": plan.frame_size,
        "excluded": plan.excluded,
        "max_import_id": plan.max_import_id,
        "hash_rule": HASH_RULE,
        "created_at": datetime.now(),
        "created_by": created_by,
        "source": source,
    }


def most_per_stratum(spec: SampleSpec) -> int:
    """The most traces any allocation of `spec` can draw from one stratum (a draw's depth)."""
    if spec.allocation == "explicit":
        return max(spec.sizes.values(), default=0)
    if spec.n is None or spec.n <= 0:
        raise SampleError(f"n must be a positive number of traces, got {spec.n}")
    return max(spec.n, spec.min_per_stratum)


def check_spec_shape(spec: SampleSpec) -> None:
    """What every route's spec must hold, whatever the frame (store, files, warehouse, server):
    a name, a known allocation, a minimum of 0 or more, stratum columns, each given once."""
    if not spec.name.strip():
        raise SampleError("give the sample a --name")
    if spec.allocation not in ALLOCATIONS:
        raise SampleError(
            f"unknown allocation {spec.allocation!r}; use one of: {', '.join(ALLOCATIONS)}"
        )
    if spec.min_per_stratum < 0:
        raise SampleError(f"the minimum per stratum must be 0 or more, got {spec.min_per_stratum}")
    if not spec.by:
        raise SampleError("stratify by at least one column (--by), e.g. feature")
    twice = sorted({name for name in spec.by if spec.by.count(name) > 1})
    if twice:
        raise SampleError(f"--by names {', '.join(twice)} twice; give each column once")
