"""Everything a rate is computed from, read from the store once: the sample's frame with each
trace's slice values and judge outcomes, the sampled units, and gold at claim and response level.

The judge's verdicts reach a rate only through its settled label mapping (saved or default);
verdicts whose label has no mapping are counted and left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from annotate.errors import UsageError
from annotate.judge.default import choose_judge
from annotate.judge.labels import mapping_rows
from annotate.kept import Recent, beside
from annotate.labelling.evidence import load_evidence
from annotate.rates.undrawn import undrawn_rows
from annotate.sampling.allocation import STRATUM_COLUMNS
from annotate.sampling.samples import known_sample
from annotate.stats.gold import (
    SUPPORTED,
    UNSUPPORTED,
    claim_gold,
    judge_response_outcome,
    response_gold,
)
from annotate.stats.resamples import draw_ahead
from annotate.store import Store
from annotate.store import rates as sql
from annotate.store.active import ActiveDesign, active_design
from annotate.store.frame_verdicts import recorded_signatures
from annotate.store.kept_frames import kept_frame_table
from annotate.store.recent import may_keep, where
from annotate.store.samples import (
    Filters,
    has_attribute,
    stored_strata,
    stratum_key_text,
)
from annotate.store.status import frame_mark

WINDOWS = sql.WINDOWS
SLICE_COLUMNS = (*STRATUM_COLUMNS, *WINDOWS)


@dataclass
class RatesInput:
    sample: str
    strata_columns: list[str]
    populations: dict[str, int]  # stratum key -> N_h
    frame: pd.DataFrame  # one row per frame trace (store.rates.frame_table) with `stratum`
    units: pd.DataFrame  # trace_id, stratum, pi, weight
    claims: pd.DataFrame  # trace_id, claim_index, gold (1 unsupported / 0), error_type
    responses: pd.DataFrame  # trace_id, gold (1 / 0)
    judge_claims: pd.DataFrame  # trace_id, claim_index, outcome: the judge on the sample's claims
    judge: str | None
    rubric_versions: list[Any] = field(default_factory=list)
    unmapped: dict[str, int] = field(default_factory=dict)  # label -> verdicts, left out
    # set when the sample was drawn in place (sample --source / --from-rows): the frame's
    # undrawn traces are rows per stratum and verdict signature, so judge rates slice by the
    # stratum columns alone (this says why not by others)
    frame_elsewhere: str | None = None
    judge_frame_known: bool = True  # False: drawn in place before those counts were recorded
    # the frame in the store (filters, max_import_id), for what reads its traces one by one;
    # None for a sample drawn in place
    frame_scope: tuple[Filters, int] | None = None
    # an active sample's draws and each unit's own probability (annotate.rates.active_rates)
    active: ActiveDesign | None = None

    def __post_init__(self) -> None:
        if "traces" not in self.frame.columns:  # a frame built row by row: one trace a row
            self.frame = self.frame.assign(traces=1)


def default_judge(store: Store, sample: str | None = None) -> str | None:
    """The current rubric's judge where it has verdicts on the sample, else the judge with the
    most verdicts (annotate.judge.default); None when there are none."""
    found = choose_judge(store, sample).judge
    if found is not None:
        return found
    counts = sql.judge_verdict_counts(store)  # a judge known only from undrawn traces' counts
    return counts[0][0] if counts else None


def check_slice_columns(store: Store, by: Sequence[str]) -> None:
    for name in by:
        if name not in SLICE_COLUMNS and not has_attribute(store, name):
            raise UsageError(
                f"cannot slice by {name!r}: not one of {', '.join(SLICE_COLUMNS)} and no trace "
                "has an attribute of that name"
            )


# The last few frames read, by store file, frame mark and the query's inputs: the frame does
# not depend on the reviewers' verdicts (annotate.store.status.frame_mark moves with what it
# reads), so a Rates page recomputed after a new label reads the store's 300,000 traces again
# only when the traces, claims, verdicts, units, mappings, settings or an act changed. Small:
# a frame has a row per sampled trace and per combination of the others' values.
RECENT_FRAMES = 2
_RECENT_FRAMES = Recent(RECENT_FRAMES)


def recent_frame(store: Store, *args: Any) -> pd.DataFrame:
    """store.rates.frame_table(store, *args), read again only when the frame's inputs moved
    (none kept for an in-memory store or inside a transaction): from this process's recent
    frames, else from the frames kept in the store for the next process
    (annotate.store.kept_frames), else computed; a copy: the caller adds columns."""
    kept = where(store, frame_mark)
    if kept is None:
        return sql.frame_table(store, *args)
    _path, mark = kept
    read = _RECENT_FRAMES.get((*kept, repr(args)), lambda: kept_frame_table(store, mark, args))
    return read.copy()


@dataclass(frozen=True)
class _FrameQuery:
    """What load_inputs reads the frame with: the sample's row, its judge and label mapping."""

    row: dict[str, Any]
    strata_columns: list[str]
    judge: str | None
    outcomes: dict[str, str]
    unmapped: dict[str, int]
    filters: Filters
    args: tuple[Any, ...]  # store.rates.frame_table's, after the store


def _frame_query(store: Store, sample: str, by: Sequence[str], judge: str | None) -> _FrameQuery:
    row = known_sample(store, sample)
    check_slice_columns(store, by)
    strata_columns = list(row["by_columns"])
    judge = judge if judge is not None else default_judge(store, sample)
    known = [name for name, _ in sql.judge_verdict_counts(store)]
    if judge is not None and judge not in known:
        raise UsageError(
            f"no verdicts from judge {judge!r}; judges in the store: {', '.join(known) or 'none'}"
        )
    mapping = mapping_rows(store, judge) if judge else []
    outcomes = {r["label"]: r["outcome"] for r in mapping if r["outcome"] is not None}
    unmapped = {r["label"]: r["verdicts"] for r in mapping if r["outcome"] is None}
    extra = [c for c in dict.fromkeys([*strata_columns, *by]) if c not in SLICE_COLUMNS]
    filters = Filters.from_json(row["filters"])
    args = (filters, strata_columns, row["max_import_id"], extra, judge, outcomes, sample)
    return _FrameQuery(row, strata_columns, judge, outcomes, unmapped, filters, args)


def read_frame_ahead(
    store: Store, sample: str, by: Sequence[str] = (), judge: str | None = None
) -> None:
    """Read the frame load_inputs(store, sample, by, judge) will ask for into the process's
    recent frames, and nothing else: the query is DuckDB's work over every frame trace, run off
    Python's lock, so a thread can do it beside Python work (widgets/ahead.py)."""
    recent_frame(store, *_frame_query(store, sample, by, judge).args)


_BESIDE = ThreadPoolExecutor(max_workers=2, thread_name_prefix="annotate-frame")


class _FrameBeside:
    """recent_frame(store, *args) on a cursor and a thread of their own: the query is DuckDB's
    work (0.3 s at 300,000 traces) and runs off Python's lock, beside the gold's reading,
    which is Python's (the votes as rows). Read in place for an in-memory store or inside a
    transaction (another cursor would not see its writes)."""

    def __init__(self, store: Store, args: tuple[Any, ...]) -> None:
        self._kept: pd.DataFrame | None = None
        self._future: Future[pd.DataFrame] | None = None
        if not may_keep(store):
            self._kept = recent_frame(store, *args)
        else:
            self._future = beside(_BESIDE, _read_on, store.session(), args)

    def settle(self) -> None:
        """Wait for the read to end, whatever its outcome."""
        if self._future is not None:
            wait([self._future])

    def frame(self) -> pd.DataFrame:
        """The frame (waits for the read; its error is raised here)."""
        if self._future is not None:
            return self._future.result()
        assert self._kept is not None
        return self._kept


def _read_on(cursor: Store, args: tuple[Any, ...]) -> pd.DataFrame:
    try:
        return recent_frame(cursor, *args)
    finally:
        cursor.close()


def load_inputs(
    store: Store,
    sample: str,
    by: Sequence[str] = (),
    judge: str | None = None,
    draws: tuple[str, int, int] | None = None,
) -> RatesInput:
    """`draws`: the (level, resamples, seed) of a rate's bootstrap (estimate.Design), drawn on a
    thread of its own while DuckDB reads the frame (numpy's draws and DuckDB both run off
    Python's lock), so the rate finds them drawn."""
    query = _frame_query(store, sample, by, judge)
    row, strata_columns, judge = query.row, query.strata_columns, query.judge
    outcomes, unmapped, filters = query.outcomes, query.unmapped, query.filters
    reading = _FrameBeside(store, query.args)  # DuckDB's, while the rest is read here
    try:
        claims, responses = gold_tables(store, sample)
        strata = [
            (stratum_key_text(key), population)
            for key, population, _, _ in stored_strata(store, sample)
        ]
        units = sql.units(store, sample)
        if draws is not None:
            drawn = labelled_units(units, claims, responses, draws[0])
            draw_ahead(list(drawn["trace_id"]), draws[1], draws[2], list(drawn["stratum"]))
        judge_claims = sql.claim_verdicts(store, sample, judge, outcomes)
        rubric_versions = sql.judge_rubric_versions(store, judge) if judge else []
        active = active_design(store, sample)
    except BaseException:
        reading.settle()  # nothing left running on the store when the error leaves
        raise
    frame = reading.frame()
    frame = with_response_outcomes(frame)
    frame["stratum"] = stratum_keys(frame, len(strata_columns))
    if row.get("source"):
        frame = _with_undrawn(
            store, sample, strata_columns, frame, units, dict(strata), judge, outcomes
        )
        frame = frame.astype({"jcu": "int64", "jcn": "int64", "unmapped": "int64"})
    return RatesInput(
        sample=sample,
        strata_columns=strata_columns,
        populations={k: int(p) for k, p in strata},
        frame=frame,
        units=units,
        claims=claims,
        responses=responses,
        judge_claims=judge_claims,
        judge=judge,
        rubric_versions=rubric_versions,
        unmapped=unmapped,
        frame_elsewhere=_frame_elsewhere(row),
        judge_frame_known=(row.get("source") or {}).get("judge_counts") != "not recorded",
        frame_scope=None if row.get("source") else (filters, row["max_import_id"]),
        active=active,
    )


def _frame_elsewhere(row: Mapping[str, Any]) -> str | None:
    source = row.get("source")
    if not source:
        return None
    if source.get("judge_counts") == "not recorded":
        return (
            f"the sample was drawn where the traces live ({source['path']}) before the judge's "
            "verdicts on the rest of the frame were recorded: draw it again for judge rates"
        )
    return (
        f"the sample was drawn where the traces live ({source['path']}): the store holds the "
        f"judge's verdicts on the rest of the frame per stratum, so judge rates slice by "
        f"{', '.join(row['by_columns'])} alone; import the population to slice by other columns"
    )


def _with_undrawn(
    store: Store,
    sample: str,
    strata_columns: Sequence[str],
    frame: pd.DataFrame,
    units: pd.DataFrame,
    populations: Mapping[str, int],
    judge: str | None,
    outcomes: Mapping[str, str],
) -> pd.DataFrame:
    """The drawn traces' rows (their stratum as drawn) and the undrawn rest of the frame."""
    stratum = dict(zip(units["trace_id"], units["stratum"], strict=True))
    drawn = frame[frame["trace_id"].isin(stratum)].copy()
    drawn["stratum"] = drawn["trace_id"].map(stratum)
    taken = units.groupby("stratum")["trace_id"].count().to_dict()
    left = {key: population - int(taken.get(key, 0)) for key, population in populations.items()}
    signatures = recorded_signatures(store, sample)
    rest = undrawn_rows(signatures, judge, outcomes, left, strata_columns, list(frame.columns))
    return pd.concat([drawn, rest], ignore_index=True) if len(rest) else drawn


def with_response_outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with `jr`, each row's response outcome (1, 0 or NaN) by
    `judge_response_outcome` of one of its traces (a row's traces share their counts), in
    place of the inputs jresp and nclaims. The rule runs once per distinct (response verdict,
    counts): a frame's rows repeat a few hundred of them."""
    traces = frame["traces"].to_numpy(np.int64)
    jcu, jcn = frame["jcu"].to_numpy(np.int64), frame["jcn"].to_numpy(np.int64)
    said = frame["jresp"].map({SUPPORTED: 1, UNSUPPORTED: 2}).fillna(0).to_numpy(np.int64)
    per_trace = np.column_stack([said, jcu // traces, (jcn - jcu) // traces,
                                 frame["nclaims"].to_numpy(np.int64)])  # fmt: skip
    distinct, row_of = _distinct_rows(per_trace)
    response, values = (None, SUPPORTED, UNSUPPORTED), {UNSUPPORTED: 1.0, SUPPORTED: 0.0}
    found = [judge_response_outcome(response[r], int(u), int(s), int(n)) for r, u, s, n in distinct]
    outcomes = np.array([values.get(o or "", math.nan) for o in found], dtype=float)
    jr = pd.Series(outcomes[row_of.reshape(-1)], index=frame.index, dtype=float)
    return frame.drop(columns=["jresp", "nclaims"]).assign(jr=jr)


def _distinct_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a table of counts (non-negative integers) and each row's place
    among them: np.unique(values, axis=0), through one number per row where they fit one."""
    if not len(values):
        return values, np.zeros(0, dtype=np.int64)
    dims = values.max(axis=0) + 1
    try:
        key = np.ravel_multi_index(tuple(values.T), tuple(dims))
    except ValueError:  # too many combinations for one int64
        distinct, row_of = np.unique(values, axis=0, return_inverse=True)
        return distinct, row_of.reshape(-1)
    found, row_of = np.unique(key, return_inverse=True)
    return np.column_stack(np.unravel_index(found, tuple(dims))), row_of


def frame_judge_counts(inputs: RatesInput) -> dict[str, dict[str, int]]:
    """Per stratum, the frame's traces and the judge's counts through its label mapping:
    traces judged and judged unsupported, claim verdicts judged and unsupported."""
    frame = inputs.frame
    judged = frame["jr"].notna()
    found: dict[str, dict[str, int]] = {}
    for key, part in frame.assign(judged=judged).groupby("stratum", sort=True):
        found[str(key)] = {
            "traces": int(part["traces"].sum()),
            "traces_judged": int(part.loc[part["judged"], "traces"].sum()),
            "traces_unsupported": int(part.loc[part["jr"] == 1, "traces"].sum()),
            "claims_judged": int(part["jcn"].sum()),
            "claims_unsupported": int(part["jcu"].sum()),
            "unmapped": int(part["unmapped"].sum()),
        }
    return found


def stratum_keys(frame: pd.DataFrame, width: int) -> pd.Series:
    """Each frame trace's stratum key, written exactly as sample_units stores it (once per
    distinct combination of the stratum values)."""
    columns = [f"s{i}" for i in range(width)]
    if not columns:
        return pd.Series(stratum_key_text(()), index=frame.index, dtype=object)
    values = frame[columns].astype(object).where(frame[columns].notna(), None)
    combos = values.drop_duplicates()
    text = [stratum_key_text(tuple(r)) for r in combos.itertuples(index=False)]
    found = values.merge(combos.assign(_key=text), how="left", on=columns)  # None meets None
    return pd.Series(found["_key"].to_numpy(object), index=frame.index, dtype=object)


def per_trace_gold(claims: pd.DataFrame, responses: pd.DataFrame, level: str) -> pd.DataFrame:
    """trace_id, num, den: each labelled trace's gold at `level` (its unsupported claims over
    its claims with gold; its response's gold over 1)."""
    if level == "response":
        return responses.rename(columns={"gold": "num"}).assign(den=1)
    grouped = claims.groupby("trace_id")["gold"].agg(["sum", "count"]).reset_index()
    return grouped.rename(columns={"sum": "num", "count": "den"})


def labelled_units(
    units: pd.DataFrame, claims: pd.DataFrame, responses: pd.DataFrame, level: str
) -> pd.DataFrame:
    """The sample's units with gold at `level`, in their order, with per_trace_gold's num and
    den: the groups a rate's bootstrap resamples (estimate.Design)."""
    found = units.merge(per_trace_gold(claims, responses, level), on="trace_id", how="inner")
    return found[found["den"] > 0]


def gold_tables(store: Store, sample: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Claim gold (supported / unsupported only) and response gold of the sample, as 1 / 0."""
    evidence = load_evidence(store, sample)
    claims = [
        (trace, index, int(g.binary == UNSUPPORTED), g.error_type)
        for (trace, index), g in sorted(claim_gold(evidence).items())
        if g.binary in (SUPPORTED, UNSUPPORTED)
    ]
    responses = [(t, int(o == UNSUPPORTED)) for t, o in sorted(response_gold(evidence).items())]
    return (
        pd.DataFrame(claims, columns=["trace_id", "claim_index", "gold", "error_type"]),
        pd.DataFrame(responses, columns=["trace_id", "gold"]),
    )
