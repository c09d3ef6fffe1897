"""Assign each sampled trace to k reviewers, load balanced, each reviewer's order seeded.

Assigning again is safe: traces already covered keep their reviewers, a reviewer left
out of the new list keeps the traces they finished and loses the rest, which go to
the others. The unit of assignment is a trace (the reviewer reads the context once).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.accounts.users import reviewer_names
from annotate.sampling.allocation import SampleError
from annotate.sampling.samples import known_sample_traces, sample_trace_ids
from annotate.store import Store
from annotate.store import assignments as sql


@dataclass
class AssignReport:
    sample: str
    added: int
    released: int
    load: dict[str, int]
    overlap_traces: int

    def as_json(self) -> dict[str, object]:
        return {
            "sample": self.sample,
            "added": self.added,
            "released": self.released,
            "load": self.load,
            "overlap_traces": self.overlap_traces,
        }


def _seeded_order(items: list[str], seed: int) -> list[str]:
    return sorted(items, key=lambda item: hashlib.sha256(f"{seed}:{item}".encode()).hexdigest())


def assign(
    store: Store,
    sample: str,
    reviewers: list[str],
    per_trace: int,
    overlap_share: float = 1.0,
    seed: int = 0,
    assigned_by: Actor | str | None = None,
) -> AssignReport:
    reviewers = sorted(set(r.strip() for r in reviewers if r.strip()))
    _check(store, sample, reviewers, per_trace, overlap_share)
    traces = _seeded_order(sample_trace_ids(store, sample), seed)
    overlap = math.ceil(overlap_share * len(traces))
    with store.transaction():
        released = _release_leavers(store, sample, reviewers)
        current = defaultdict(set)
        positions: Counter[str] = Counter()
        for trace_id, reviewer, position in sql.active_assignments(store, sample):
            current[trace_id].add(reviewer)
            positions[reviewer] = max(positions[reviewer], position)
        load = Counter({r: 0 for r in reviewers})
        for members in current.values():
            load.update(m for m in members if m in load)
        added = _fill(traces, overlap, per_trace, reviewers, current, load, seed)
        rows = _positions(added, positions, seed)
        who = as_actor(assigned_by)
        sql.add_assignments(store, sample, rows, who.name)
        record_act(
            store,
            who,
            "assignment",
            sample,
            added=len(rows),
            released=released,
            reviewers=reviewers,
        )
    return AssignReport(sample, len(rows), released, dict(load), min(overlap, len(traces)))


def _check(
    store: Store, sample: str, reviewers: list[str], per_trace: int, overlap_share: float
) -> None:
    known_sample_traces(store, sample)
    if not reviewers:
        raise SampleError("name at least one reviewer")
    if not 1 <= per_trace <= len(reviewers):
        raise SampleError(
            f"--per-trace must be between 1 and the number of reviewers ({len(reviewers)}), got {per_trace}"
        )
    if not 0.0 <= overlap_share <= 1.0:
        raise SampleError(f"--overlap-share must be between 0 and 1, got {overlap_share}")
    known = set(reviewer_names(store))
    unknown = [r for r in reviewers if r not in known]
    if unknown:
        raise SampleError(
            f"no active reviewer or lead account named {', '.join(unknown)}; add them with `annotate user add`"
        )


def _release_leavers(store: Store, sample: str, reviewers: list[str]) -> int:
    """Reviewers no longer listed keep their finished traces; unfinished ones are released."""
    released = 0
    leavers = {r for _, r, _ in sql.active_assignments(store, sample)} - set(reviewers)
    for reviewer in sorted(leavers):
        done = sql.done_traces(store, sample, reviewer)
        for trace_id, who, _ in sql.active_assignments(store, sample):
            if who == reviewer and trace_id not in done:
                sql.deactivate(store, sample, trace_id, reviewer)
                released += 1
    return released


def _fill(
    traces: list[str],
    overlap: int,
    per_trace: int,
    reviewers: list[str],
    current: dict[str, set[str]],
    load: Counter[str],
    seed: int,
) -> list[tuple[str, str]]:
    tie_break = {r: i for i, r in enumerate(_seeded_order(reviewers, seed))}
    added = []
    for index, trace_id in enumerate(traces):
        wanted = per_trace if index < overlap else 1
        members = current[trace_id]
        while len(members) < wanted:
            free = [r for r in reviewers if r not in members]
            if not free:
                break
            chosen = min(free, key=lambda r: (load[r], tie_break[r]))
            members.add(chosen)
            load[chosen] += 1
            added.append((trace_id, chosen))
    return added


def _positions(
    added: list[tuple[str, str]], start: Counter[str], seed: int
) -> list[tuple[str, str, int]]:
    """Each reviewer's new traces in an order shuffled by the seed, after what they have."""
    by_reviewer: dict[str, list[str]] = defaultdict(list)
    for trace_id, reviewer in added:
        by_reviewer[reviewer].append(trace_id)
    rows = []
    for reviewer, trace_ids in sorted(by_reviewer.items()):
        random.Random(f"{seed}:{reviewer}").shuffle(trace_ids)
        rows += [(t, reviewer, start[reviewer] + i + 1) for i, t in enumerate(trace_ids)]
    return rows
