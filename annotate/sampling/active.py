"""Active (judge-guided) draws: each frame trace gets its own inclusion probability, rising with
the judge's expected error there and mixed with a uniform floor (annotate.stats.active), and is
drawn when its seeded hash uniform falls below it: Poisson sampling by hash, reproducible from
the seed. A top-up draws again among the traces not drawn yet, with new probabilities.

The expected errors come in from the caller (annotate.rates.active reads gold; sampling must
not). Each unit is stored with its own probability in its draw and weight 1 / pi; the draw's
budget and floor in active_draws (store.active).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.sampling.allocation import SampleError, SampleSpec, StratumPlan
from annotate.sampling.drawn import Plan, _sample_record, check_name_free, judge_outcomes
from annotate.sampling.offered import ACTIVE
from annotate.sampling.samples import frame_strata
from annotate.stats.active import design_shares, inclusion_probabilities
from annotate.store import Store
from annotate.store import active as sql
from annotate.store import samples as sample_sql

HASH_DIGITS = 15  # of sha256's hex: a uniform on a grid of 16^15, finer than any probability
ACTIVE_HASH_RULE = (
    "u = int(first 15 hex digits of sha256(seed || ':' || draw || ':' || trace_id)) / 16^15; "
    "a trace is drawn when u < its inclusion probability (Poisson sampling)"
)


def hash_uniforms(seed: int, draw: int, trace_ids: Sequence[str]) -> np.ndarray:
    """Each trace's seeded uniform for draw `draw` (a new draw: independent uniforms)."""
    scale = float(16**HASH_DIGITS)
    return np.array(
        [
            int(hashlib.sha256(f"{seed}:{draw}:{t}".encode()).hexdigest()[:HASH_DIGITS], 16) / scale
            for t in trace_ids
        ],
        dtype=float,
    )


@dataclass
class Frame:
    """The frame of an active sample: one row per trace (store.active.frame_traces, plus `key`,
    its stratum values), the strata's counts, its size and what it excluded."""

    traces: pd.DataFrame
    counts: list[tuple[Any, int, float | None]]
    size: int
    excluded: dict[str, int]
    snapshot: int


def active_frame(
    store: Store, spec: SampleSpec, judges: Sequence[str], snapshot: int | None = None
) -> Frame:
    """Every frame trace with the judges' verdicts (checked as any sample's frame is)."""
    snapshot = sample_sql.max_import_id(store) if snapshot is None else snapshot
    counts, size, excluded = frame_strata(store, replace(spec, allocation="proportional"), snapshot)
    outcomes = {(j, label): o for j, label, o in judge_outcomes(store) if j in set(judges)}
    traces = sql.frame_traces(store, spec.filters, spec.by, snapshot, judges, outcomes)
    columns = [f"s{i}" for i in range(len(spec.by))]
    values = traces[columns].astype(object).where(traces[columns].notna(), None)
    traces["key"] = [tuple(r) for r in values.itertuples(index=False)]
    return Frame(traces, counts, size, excluded, snapshot)


@dataclass
class ActiveDraw:
    """What one active draw did: the plan (strata and drawn ids), what its probabilities
    followed, the floor's weight, the expected size and every eligible trace's probability."""

    plan: Plan
    draw: int
    judge: str
    basis: str
    floor_weight: float
    budget: float
    probabilities: pd.DataFrame  # trace_id, key, pi, drawn

    def as_json(self) -> dict[str, Any]:
        pi = self.probabilities["pi"]
        return {
            **self.plan.as_json(),
            "allocation": ACTIVE,
            "draw": self.draw,
            "judge": self.judge,
            "basis": self.basis,
            "floor_weight": self.floor_weight,
            "budget": self.budget,
            "inclusion_probability": {"min": float(pi.min()), "max": float(pi.max())},
            "hash_rule": ACTIVE_HASH_RULE,
        }


def check_budget(budget: float, eligible: int) -> None:
    if not 0 < budget <= eligible:
        raise SampleError(
            f"the budget must be between 1 and the {eligible} traces not yet drawn, got "
            f"{budget:g}; give --budget (or --n) within it"
        )


def draw_active(
    store: Store,
    spec: SampleSpec,
    frame: Frame,
    variance: np.ndarray,
    choice: tuple[float, float, str, str],
    created_by: Actor | str | None = None,
    plan_only: bool = False,
) -> ActiveDraw:
    """Draw into sample `spec.name` (new, or an active sample's top-up) among the frame traces
    not drawn yet; `variance`: each such trace's expected squared error (frame.traces order,
    drawn traces included and skipped); choice: (budget, floor weight, basis, judge)."""
    budget, floor_weight, basis, judge = choice
    existing = sample_sql.sample_row(store, spec.name)
    drawn_before = set(_unit_ids(store, spec.name)) if existing else set()
    eligible = ~frame.traces["trace_id"].isin(drawn_before).to_numpy()
    check_budget(budget, int(eligible.sum()))
    draw = sample_sql.next_draw(store, spec.name) if existing else 1
    pi = inclusion_probabilities(
        design_shares(np.asarray(variance)[eligible], floor_weight), budget
    )
    rows = frame.traces.loc[eligible, ["trace_id", "key"]].reset_index(drop=True)
    u = hash_uniforms(spec.seed, draw, list(rows["trace_id"]))
    rows = rows.assign(pi=pi, u=u, drawn=u < pi)
    plan = _plan(spec, frame, rows, store if existing else None)
    result = ActiveDraw(plan, draw, judge, basis, floor_weight, float(pi.sum()), rows)
    if plan_only:
        return result
    who = as_actor(created_by)
    with store.transaction():
        if not existing:
            check_name_free(store, spec.name)
            record = {**_sample_record(plan, who.name), "hash_rule": ACTIVE_HASH_RULE}
            sample_sql.insert_sample(store, record)
        _store(store, spec, plan, rows, draw, who.name)
        sql.add_draw(store, spec.name, draw, {"judge": judge, "basis": basis,
                     "budget": result.budget, "floor_weight": floor_weight,
                     "hash_rule": ACTIVE_HASH_RULE})  # fmt: skip
        act = "sample" if draw == 1 else "top_up"
        record_act(store, who, act, spec.name, traces=len(plan.trace_ids), seed=spec.seed)
    return result


def _unit_ids(store: Store, sample: str) -> list[str]:
    return [unit["trace_id"] for unit in sample_sql.sample_units(store, sample)]


def _plan(spec: SampleSpec, frame: Frame, rows: pd.DataFrame, store: Store | None) -> Plan:
    """The strata after the draw: N_h and the traces drawn so far, with the new ones' ids."""
    stored = sample_sql.stored_strata(store, spec.name) if store else []
    taken = {key: size for key, _, size, _ in stored}
    new = rows[rows["drawn"]]
    added = new.groupby("key").size().to_dict() if len(new) else {}
    strata = [
        StratumPlan(key, population, taken.get(key, 0) + int(added.get(key, 0)), rate)
        for key, population, rate in frame.counts
    ]
    plan = Plan(spec, frame.size, frame.excluded, strata, frame.snapshot)
    plan.trace_ids = list(new.sort_values(["u", "trace_id"])["trace_id"])
    return plan


def _store(
    store: Store, spec: SampleSpec, plan: Plan, rows: pd.DataFrame, draw: int, who: str
) -> None:
    """Units ranked within their stratum by their uniform (after the ones drawn before), their
    own probabilities, and the strata's current sizes (no n_h / N_h refresh: pi is per trace)."""
    new = rows[rows["drawn"]].sort_values(["u", "trace_id"])
    before = {key: size - int((new["key"] == key).sum()) for key, _, size, _ in
              [(s.values, s.population, s.sample, s.judge_rate) for s in plan.strata]}  # fmt: skip
    ranks = new.groupby("key").cumcount() + 1
    units = [
        (t, key, before.get(key, 0) + int(rank))
        for t, key, rank in zip(new["trace_id"], new["key"], ranks, strict=True)
    ]
    sample_sql.replace_strata(
        store, spec.name, [(s.values, s.population, s.sample, s.judge_rate) for s in plan.strata]
    )
    sample_sql.add_units(store, spec.name, draw, units, who)
    sql.set_probabilities(store, spec.name, list(new["trace_id"]), list(new["pi"]))
