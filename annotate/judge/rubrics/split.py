"""The held-out split: the labelled claims of a sample, split once, seeded and stratified by
feature and gold outcome, into a tuning part and a held-out part (default 30%).

Claims labelled after the split join it by the same seeded hash; no claim ever moves.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from typing import Any

from annotate.accounts.activity import Actor, record_act
from annotate.labelling.evidence import load_evidence
from annotate.stats.gold import claim_gold
from annotate.store import Store
from annotate.store import rubrics as sql

HELD_OUT = "held_out"
TUNING = "tuning"
PARTS = (HELD_OUT, TUNING)
DEFAULT_SHARE = 0.3


def _rank(seed: int, trace_id: str, claim_index: int) -> float:
    digest = hashlib.sha256(f"{seed}:{trace_id}:{claim_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def ensure_split(
    store: Store,
    sample: str,
    seed: int = 0,
    share: float = DEFAULT_SHARE,
    actor: Actor | str | None = None,
) -> dict[tuple[str, int], str]:
    """(trace, claim) -> tuning | held_out for every labelled claim of the sample; claims not
    in the split yet are added (recorded as an act of `actor`, the OS user when None)."""
    parts = sql.split_rows(store, sample)
    labelled = sql.labelled_claims(store, sample)
    new = [c for c in labelled if (c["trace_id"], c["claim_index"]) not in parts]
    if not new:
        return parts
    stored_seed = sql.split_seed(store, sample)
    if stored_seed is None:
        added = _first_split(store, sample, new, seed, share)
    else:
        seed = stored_seed
        added = [
            (
                c["trace_id"],
                c["claim_index"],
                HELD_OUT if _rank(seed, c["trace_id"], c["claim_index"]) < share else TUNING,
            )
            for c in new
        ]
    with store.transaction():
        sql.insert_split(store, sample, seed, added)
        held = sum(part == HELD_OUT for _, _, part in added)
        record_act(
            store, actor, "rubric", f"split {sample}", seed=seed, added=len(added), held_out=held
        )
    return {**parts, **{(t, i): p for t, i, p in added}}


def _first_split(
    store: Store, sample: str, claims: list[dict[str, Any]], seed: int, share: float
) -> list[tuple[str, int, str]]:
    gold = claim_gold(load_evidence(store, sample))
    strata: dict[tuple[Any, Any], list[tuple[str, int]]] = defaultdict(list)
    for claim in claims:
        unit = (claim["trace_id"], claim["claim_index"])
        outcome = gold[unit].binary if unit in gold else None
        strata[(claim["feature"], outcome)].append(unit)
    added = []
    for units in strata.values():
        units.sort(key=lambda u: _rank(seed, *u))
        cut = math.floor(len(units) * share + 0.5)  # half up, not to even
        added += [(t, i, HELD_OUT if n < cut else TUNING) for n, (t, i) in enumerate(units)]
    return added


def part_units(store: Store, sample: str, part: str) -> set[tuple[str, int]]:
    return {unit for unit, p in ensure_split(store, sample).items() if p == part}
