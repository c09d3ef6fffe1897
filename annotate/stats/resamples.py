"""A bootstrap's resamples: groups (the traces a unit belongs to) drawn with replacement within
their strata, as counts per resample; kept per process, shared within a report, drawn ahead on
a thread of their own. Pure numpy: no store, no streamlit.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from annotate.kept import Recent, beside
from annotate.stats.shared import sharing

Weights = tuple[np.ndarray, np.ndarray, int]  # draws (R x G), each unit's group, strata count


def resample_weights(
    groups: Sequence[Hashable],
    repetitions: int,
    seed: int,
    strata: Sequence[Hashable] | None = None,
) -> Weights:
    """Groups drawn with replacement within their stratum (a unit's stratum is its group's).

    A stratum with one group cannot vary, so such strata are pooled into one.
    Returns (repetitions x groups draw counts, each unit's group index, number of strata).
    """
    key, member, by_stratum = _draw_key(groups, repetitions, seed, strata)
    shared = _SHARED.get()
    if shared is not None and key in shared:
        return shared[key], member, len(by_stratum)
    draws = _recent_draws(key, by_stratum)
    if shared is not None:
        draws.flags.writeable = False  # shared by every statistic of the report
        shared[key] = draws
    return draws, member, len(by_stratum)


def _draw_key(
    groups: Sequence[Hashable],
    repetitions: int,
    seed: int,
    strata: Sequence[Hashable] | None,
) -> tuple[tuple[Any, ...], np.ndarray, list[list[int]]]:
    """The draws' key (they depend on nothing else), each unit's group index, the strata."""
    index: dict[Hashable, int] = dict.fromkeys(groups, 0)  # groups in order of first appearance
    for number, group in enumerate(index):
        index[group] = number
    member = np.fromiter(map(index.__getitem__, groups), dtype=np.int64, count=len(groups))
    if strata is None:
        stratum_of: dict[int, Hashable] = dict.fromkeys(range(len(index)))
    else:  # a group's stratum is its first unit's
        first = np.unique(member, return_index=True)[1].tolist()
        stratum_of = {group: strata[unit] for group, unit in enumerate(first)}
    by_stratum = _pooled(stratum_of, len(index))
    key = (repetitions, seed, len(index), tuple(tuple(members) for members in by_stratum))
    return key, member, by_stratum


def draw_ahead(
    groups: Sequence[Hashable],
    repetitions: int,
    seed: int,
    strata: Sequence[Hashable] | None = None,
) -> None:
    """Start drawing what resample_weights(groups, repetitions, seed, strata) will ask for,
    on a thread of its own: numpy's multinomial runs without Python's lock, so a statistic
    that knows its next draws (Calibration's slices, Agreement's pairs) has them drawn on the
    other core while it computes the present one in Python. The same key, the same numbers;
    resample_weights waits for a draw under way rather than drawing it again."""
    if repetitions * len(groups) > RECENT_DRAWS_BYTES:
        return  # too large a matrix to be kept: drawn where it is used
    key, _, by_stratum = _draw_key(groups, repetitions, seed, strata)
    if not _RECENT_DRAWS.busy(key):
        beside(_AHEAD, _recent_draws, key, by_stratum)


def _draws(repetitions: int, seed: int, groups: int, by_stratum: list[list[int]]) -> np.ndarray:
    rng = np.random.default_rng(seed)
    draws = np.zeros((repetitions, groups))
    for members in by_stratum:
        size = len(members)
        draws[:, members] = rng.multinomial(size, np.full(size, 1 / size), size=repetitions)
    return draws


# The last draws of this process, kept as counts in the smallest unsigned type that holds them
# (a quarter of the float64 matrix or less), up to RECENT_DRAWS_BYTES in all: the pages, a
# report and a new label on traces already labelled ask for the same groups again (Agreement
# and Calibration over the same traces: the same matrix), and numpy's multinomial is most of a
# resample's cost (30-100 ms for 1,000 x 2,500). Same key, same numbers: each caller gets its
# own float64 copy.
RECENT_DRAWS_BYTES = 64 * 2**20


def _draws_kept(budget: int) -> Recent:
    """The draws kept, by their key, as counts (compact), up to `budget` bytes."""
    return Recent(budget, cost=lambda counts: counts.nbytes)


_RECENT_DRAWS = _draws_kept(RECENT_DRAWS_BYTES)
# draw_ahead's one thread: the second core beside the statistics' Python
_AHEAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="annotate-draws")


def _recent_draws(key: tuple[Any, ...], by_stratum: list[list[int]]) -> np.ndarray:
    """The draws for `key`, kept or drawn (a draw under way, draw_ahead's or another
    session's, is waited for); the caller's own float64 copy."""

    def draw() -> np.ndarray:
        repetitions, seed, groups, _ = key
        largest = max((len(members) for members in by_stratum), default=0)
        draws = _draws(repetitions, seed, groups, by_stratum)
        return draws.astype(np.min_scalar_type(largest))

    return _RECENT_DRAWS.get(key, draw).astype(np.float64)


# The draws depend only on the number of groups, their strata, the repetitions and the seed, so
# within one report (agreement, calibration, slices: up to nine asks for the same traces) they
# are drawn once: same numbers, one matrix.
_SHARED: ContextVar[dict[Any, np.ndarray] | None] = ContextVar("shared_resamples", default=None)


@contextmanager
def shared_resamples() -> Iterator[None]:
    """Inside this block resample_weights draws each distinct set of resamples once; the
    matrices are freed when the outermost block ends."""
    with sharing(_SHARED):
        yield


def _pooled(stratum_of: dict[int, Hashable], groups: int) -> list[list[int]]:
    """Groups by stratum, strata of a single group pooled (into the first stratum if alone)."""
    by_stratum: dict[Hashable, list[int]] = {}
    for group in range(groups):
        by_stratum.setdefault(stratum_of[group], []).append(group)
    kept = [members for members in by_stratum.values() if len(members) > 1]
    single = [members[0] for members in by_stratum.values() if len(members) == 1]
    if len(single) > 1 or (single and not kept):
        kept.append(single)
    elif single:
        kept[0] = kept[0] + single
    return kept
