"""`annotate sample --from phoenix|mlflow`: a stratified sample drawn from a server's trace list
(ids and the stratum columns only), then only the drawn traces fetched whole and imported.

The allocation and the draw are the store's (annotate.sampling): the same strata in key
order, the same sizes, and within a stratum the same hash order (sha256 of "<seed>:<trace id>",
then the id), so the sample equals, trace for trace, the one drawn from the same traces
imported as a file, where each of the server's traces is one call (the id an import gives a
trace's only call is its OTel trace id). The list cannot tell whether a trace holds a
judgeable call: a drawn trace that imports as none is named in the report and left out.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from annotate.accounts.activity import Actor, as_actor, may_act, record_act
from annotate.connectors.pull import PullReport, pages, pull_page
from annotate.connectors.server import Listed, Server, talking_to
from annotate.sampling.allocation import SampleError, SampleSpec, StratumPlan
from annotate.sampling.drawn import (
    Plan,
    _check_columns_have_values,
    _sample_record,
    _sizes,
    _store_draw,
    check_name_free,
    check_spec_shape,
    excluded_counts,
)
from annotate.store import Store
from annotate.store import samples as sample_sql
from annotate.store.imports import otel_trace_rows

Key = tuple[Any, ...]


def frame_strata(listed: Sequence[Listed], by: Sequence[str]) -> dict[Key, list[Listed]]:
    """The server's traces by stratum, in the store's key order (values ascending, none last)."""
    strata: dict[Key, list[Listed]] = defaultdict(list)
    for entry in listed:
        strata[tuple(_text(entry.strata.get(column)) for column in by)].append(entry)
    order = sorted(strata, key=lambda key: [(value is None, value or "") for value in key])
    return {key: strata[key] for key in order}


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def hash_order(entries: Sequence[Listed], seed: int) -> list[Listed]:
    """The store's draw order: sha256 of "<seed>:<trace id>" in hex, then the id."""

    def key(entry: Listed) -> str:
        unit = _unit(entry)
        return hashlib.sha256(f"{seed}:{unit}".encode()).hexdigest() + unit

    return sorted(entries, key=key)


def _unit(entry: Listed) -> str:
    return entry.otel_trace_id or entry.tool_id


def plan_from_server(
    server: Server, spec: SampleSpec, since: datetime | None = None, until: datetime | None = None
) -> tuple[Plan, dict[Key, list[Listed]]]:
    check_spec_shape(spec)
    with talking_to(server.source, "listing its traces"):
        strata = frame_strata(list(server.list_traces(since, until, strata=True)), spec.by)
    if not strata:
        raise SampleError(f"{server.source} holds no trace in the window: nothing to draw from")
    counts: list[tuple[Any, int, float | None]] = [(k, len(e), None) for k, e in strata.items()]
    _check_columns_have_values(spec, counts)  # as a draw from the store checks
    sizes = _sizes(spec, counts)
    plans = [
        StratumPlan(key, n_all, size, None)
        for (key, n_all, _), size in zip(counts, sizes, strict=True)
    ]
    frame = sum(len(entries) for entries in strata.values())
    return Plan(spec, frame, excluded_counts(0, 0), plans, 0), strata


def draw_from_server(
    store: Store,
    server: Server,
    spec: SampleSpec,
    since: datetime | None = None,
    until: datetime | None = None,
    actor: Actor | str | None = None,
) -> tuple[Plan, PullReport, list[str]]:
    """Draw, import the drawn traces, store the sample: (plan, the pull, drawn ids not stored)."""
    who = as_actor(actor)
    may_act(who, "sample")
    check_name_free(store, spec.name)
    plan, strata = plan_from_server(server, spec, since, until)
    drawn = [
        (entry, stratum.values, rank)
        for stratum in plan.strata
        for rank, entry in enumerate(
            hash_order(strata[stratum.values], spec.seed)[: stratum.sample], 1
        )
    ]
    report = PullReport(server.source, listed=plan.frame_size)
    for page in pages([entry for entry, _, _ in drawn], 200):
        pull_page(store, server, page, report, who)
    stored = {row[0] for row in otel_trace_rows(store, [_unit(e) for e, _, _ in drawn])}
    units = [(_unit(e), key, rank) for e, key, rank in drawn if _unit(e) in stored]
    missing = [e.tool_id for e, _, _ in drawn if _unit(e) not in stored]
    plan.max_import_id = sample_sql.max_import_id(store)
    with store.transaction():
        sample_sql.insert_sample(store, _sample_record(plan, who.name))
        ranges = [(s.values, 0, s.sample) for s in plan.strata]
        _store_draw(store, plan, ranges, who.name, lambda _ranges: units)
        record_act(
            store, who, "sample", spec.name, traces=len(units), seed=spec.seed, source=server.source
        )
    return plan, report, missing
