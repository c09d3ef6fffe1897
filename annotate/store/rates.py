"""SQL for rates: the sample's frame with each trace's slice values and its judge's mapped
verdicts, the sample's units and strata, judge scores, and whole tables for the auditor bundle.

Identifiers come only from closed sets; attribute names and values travel as parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from annotate.store import Store
from annotate.store.frame_verdicts import UNDRAWN_LABELS
from annotate.store.samples import Filters, frame_cte, json_path

WINDOWS = ("day", "week", "month")  # time-window slices, from the trace's timestamp
_COLUMNS = ("feature", "risk_category", "model")


def _mapping(outcomes: Mapping[str, str]) -> pa.Table:
    return pa.table(
        {"label": list(outcomes), "outcome": list(outcomes.values())},
        schema=pa.schema([("label", pa.string()), ("outcome", pa.string())]),
    )


def frame_table(
    store: Store,
    filters: Filters,
    by: Sequence[str],
    max_import_id: int,
    attributes: Sequence[str],
    judge: str | None,
    outcomes: Mapping[str, str],
    sample: str,
) -> pd.DataFrame:
    """The frame: s0.. (stratum values), feature, risk_category, model, day, week, month, each
    attribute, the judge's latest mapped verdicts: jcu / jcn (claims judged unsupported /
    judged), jresp (its own response verdict: supported, unsupported or None), nclaims (the
    trace's claims), unmapped (verdicts with no mapping), and `traces`, the frame traces a row
    stands for. The response outcome is `annotate.stats.gold.judge_response_outcome` of these
    (rates.inputs), not a rule of its own here.

    A trace of `sample` is a row of its own (with its trace_id); the rest of the frame is one
    row per distinct set of the other values (trace_id NULL, jcu, jcn and unmapped summed over
    its traces, as for a sample drawn in place), so the table grows with the sample and the
    values' combinations, not with the store (a million traces made a million rows). A row's
    traces have the same judge claim counts (each jcu / traces of jcn / traces): a bootstrap
    resamples them as traces (claims of one trace move together)."""
    sql, params = frame_statement(filters, by, max_import_id, attributes, judge, sample)
    table = store.fetch_arrow_with_batch(sql, _mapping(outcomes), params)
    frame = table.to_pandas()
    frame = frame.sort_values(list(frame.columns), na_position="last", ignore_index=True)
    return frame.rename(columns={f"a{i}": a for i, a in enumerate(attributes)})


def frame_statement(
    filters: Filters,
    by: Sequence[str],
    max_import_id: int,
    attributes: Sequence[str],
    judge: str | None,
    sample: str,
) -> tuple[str, list[Any]]:
    """frame_table's SQL and parameters (it reads the label mapping as `_batch`)."""
    # the frame carries the traces' columns the rows need: joining traces again to read them
    # was a sixth of the query (300,000 traces)
    carried = ["feature", "risk_category", "model", "timestamp"] + ["attributes"] * bool(attributes)
    cte, params = frame_cte(filters, by, max_import_id, columns=carried)
    attrs = "".join(
        f", json_extract_string(f.attributes, ?) AS a{i}" for i in range(len(attributes))
    )
    keys = "".join(f"f.s{i}, " for i in range(len(by)))
    plain = "".join(f"s{i}, " for i in range(len(by)))
    attr_names = "".join(f", a{i}" for i in range(len(attributes)))
    sql = (
        f"WITH {cte}, latest AS (SELECT trace_id, level, claim_index, arg_max(label, rowid) AS label "
        "FROM judge_verdicts WHERE judge = ? AND trace_id IN (SELECT trace_id FROM frame) "
        "GROUP BY trace_id, level, claim_index), "
        "judged AS (SELECT v.trace_id, "
        "count(*) FILTER (WHERE v.level = 'claim' AND m.outcome = 'unsupported') AS jcu, "
        "count(*) FILTER (WHERE v.level = 'claim' AND m.outcome IN ('supported', 'unsupported')) AS jcn, "
        "bool_or(m.outcome = 'unsupported') FILTER (WHERE v.level = 'response' "
        "  AND m.outcome IN ('supported', 'unsupported')) AS jresp, "
        "count(*) FILTER (WHERE m.outcome IS NULL) AS unmapped "
        "FROM latest v LEFT JOIN _batch m USING (label) GROUP BY v.trace_id), "
        "claim_counts AS (SELECT trace_id, count(*) AS n FROM claims "
        "WHERE trace_id IN (SELECT trace_id FROM frame) GROUP BY trace_id), "
        # a drawn trace keeps its trace_id (a group of its own); the others group by value
        "trace_rows AS (SELECT CASE WHEN drawn.trace_id IS NOT NULL THEN f.trace_id END "
        f"AS trace_id, {keys}f.feature, f.risk_category, f.model, "
        f"date_trunc('day', f.timestamp) AS day_start{attrs}, "
        "coalesce(j.jcu, 0) AS jcu, coalesce(j.jcn, 0) AS jcn, "
        "CASE WHEN j.jresp THEN 'unsupported' WHEN NOT j.jresp THEN 'supported' END AS jresp, "
        "coalesce(c.n, 0) AS nclaims, coalesce(j.unmapped, 0) AS unmapped "
        "FROM frame f LEFT JOIN judged j USING (trace_id) "
        "LEFT JOIN claim_counts c USING (trace_id) "
        "LEFT JOIN (SELECT trace_id FROM sample_units WHERE sample = ?) drawn USING (trace_id)) "
        f"SELECT trace_id, {plain}feature, risk_category, model, "
        "strftime(day_start, '%Y-%m-%d') AS day, "
        "strftime(date_trunc('week', day_start), '%Y-%m-%d') AS week, "
        f"strftime(date_trunc('month', day_start), '%Y-%m') AS month{attr_names}, "
        "sum(jcu)::BIGINT AS jcu, sum(jcn)::BIGINT AS jcn, jresp, nclaims, "
        "sum(unmapped)::BIGINT AS unmapped, count(*) AS traces FROM trace_rows "
        f"GROUP BY trace_id, {plain}feature, risk_category, model, day_start{attr_names}, jresp, "
        "nclaims, trace_rows.jcu, trace_rows.jcn"
    )  # no ORDER BY: with one, DuckDB ran out of a 256MB limit at 1,000,000 traces
    attr_params = [json_path(a) for a in attributes]
    return sql, [*params, judge or "", *attr_params, sample]


def claim_verdicts(
    store: Store, sample: str, judge: str | None, outcomes: Mapping[str, str]
) -> pd.DataFrame:
    """The judge's latest claim-level verdict on each claim of the sample, with its outcome."""
    rows = store.fetch_with_batch(
        "WITH latest AS (SELECT v.trace_id, v.claim_index, arg_max(v.label, v.rowid) AS label "
        "FROM judge_verdicts v WHERE v.judge = ? AND v.level = 'claim' AND v.trace_id IN "
        "(SELECT trace_id FROM sample_units WHERE sample = ?) GROUP BY v.trace_id, v.claim_index) "
        "SELECT l.trace_id, l.claim_index, m.outcome FROM latest l LEFT JOIN _batch m USING (label) "
        "ORDER BY l.trace_id, l.claim_index",
        _mapping(outcomes),
        [judge or "", sample],
    )
    return pd.DataFrame(rows, columns=["trace_id", "claim_index", "outcome"])


def units(store: Store, sample: str) -> pd.DataFrame:
    rows = store.fetchall(
        "SELECT trace_id, stratum_key, inclusion_probability, weight FROM sample_units "
        "WHERE sample = ? ORDER BY stratum_key, rank",
        [sample],
    )
    return pd.DataFrame(rows, columns=["trace_id", "stratum", "pi", "weight"])


def judge_scores(store: Store, sample_frame_ids: Any, judge: str) -> np.ndarray:
    table = store.fetch_arrow_with_batch(
        "SELECT score FROM judge_verdicts JOIN _batch USING (trace_id) "
        "WHERE judge = ? AND score IS NOT NULL AND isfinite(score)",
        sample_frame_ids,
        [judge],
    )
    return table.column("score").to_numpy()


def frame_judge_scores(
    store: Store, filters: Filters, max_import_id: int, judge: str
) -> np.ndarray:
    """The judge's finite scores on every trace of a frame (each verdict's score)."""
    cte, params = frame_cte(filters, (), max_import_id)
    table = store.fetch_arrow(
        f"WITH {cte} SELECT v.score FROM judge_verdicts v SEMI JOIN frame f USING (trace_id) "
        "WHERE v.judge = ? AND v.score IS NOT NULL AND isfinite(v.score)",
        [*params, judge],
    )
    return table.column("score").to_numpy()


def judge_verdict_counts(store: Store) -> list[tuple[str, int]]:
    return [
        (r[0], int(r[1]))
        for r in store.fetchall(
            "SELECT judge, sum(verdicts) AS n FROM (SELECT judge, count(*) AS verdicts FROM "
            f"judge_verdicts GROUP BY judge UNION ALL SELECT judge, verdicts FROM ({UNDRAWN_LABELS})) "
            "GROUP BY judge "
            "ORDER BY n DESC, judge"
        )
    ]


def verdicts_have_rubric_version(store: Store) -> bool:
    return bool(
        store.scalar(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = 'judge_verdicts' AND column_name = 'rubric_version'"
        )
    )


def judge_rubric_versions(store: Store, judge: str) -> list[Any]:
    """The rubric versions the judge's verdicts carry (when verdicts record one)."""
    if not verdicts_have_rubric_version(store):
        return []
    rows = store.fetchall(
        "SELECT DISTINCT rubric_version FROM judge_verdicts "
        "WHERE judge = ? AND rubric_version IS NOT NULL ORDER BY 1",
        [judge],
    )
    return [r[0] for r in rows]


# --- whole tables, for the auditor bundle and its check ------------------------------------

BUNDLE_TABLES = (
    "samples",
    "sample_strata",
    "sample_units",
    "sample_draws",
    "traces",
    "claims",
    "label_events",
    "adjudications",
    "rubrics",
    "judge_verdicts",
    "judge_label_map",
    "sample_judge_counts",  # a source sample's undrawn frame traces (store.frame_verdicts)
    "active_draws",  # an active sample's draws: budgets and what they followed (store.active)
    "rating_events",  # reviewers' ratings of the sample's responses (annotate.ratings)
    "judge_ratings",
)
_TRACE_FIELDS = (
    "trace_id, import_id, source_line, content_hash, timestamp, feature, risk_category, model, "
    "'' AS request, '' AS response, judgeable, attributes"
)


def bundle_table(store: Store, table: str, sample: str) -> pa.Table:
    """`table`'s rows an audit of `sample` needs (trace text is left out: rates need none)."""
    if table not in BUNDLE_TABLES:
        raise ValueError(f"not a bundle table: {table}")
    in_sample = "trace_id IN (SELECT trace_id FROM sample_units WHERE sample = ?)"
    queries = {
        "samples": ("SELECT * FROM samples WHERE name = ?", [sample]),
        "sample_strata": ("SELECT * FROM sample_strata WHERE sample = ?", [sample]),
        "sample_units": ("SELECT * FROM sample_units WHERE sample = ?", [sample]),
        "sample_draws": ("SELECT * FROM sample_draws WHERE sample = ?", [sample]),
        "traces": (
            f"SELECT {_TRACE_FIELDS} FROM traces WHERE import_id <= "
            "(SELECT max_import_id FROM samples WHERE name = ?) ORDER BY rowid",
            [sample],
        ),
        # every frame trace's claims (a response's verdict needs how many it has), the text
        # of the sample's alone
        "claims": (
            f"SELECT trace_id, claim_index, CASE WHEN {in_sample} THEN text ELSE '' END AS text, "
            "start_offset, end_offset, origin FROM claims WHERE trace_id IN (SELECT trace_id "
            "FROM traces WHERE import_id <= (SELECT max_import_id FROM samples WHERE name = ?)) "
            "ORDER BY rowid",
            [sample, sample],
        ),
        "label_events": (
            f"SELECT * FROM label_events WHERE {in_sample} ORDER BY event_id",
            [sample],
        ),
        "adjudications": (
            f"SELECT * FROM adjudications WHERE {in_sample} ORDER BY event_id",
            [sample],
        ),
        "rubrics": ("SELECT * FROM rubrics ORDER BY version", []),
        "judge_verdicts": (
            "SELECT * FROM judge_verdicts WHERE trace_id IN (SELECT trace_id FROM traces "
            "WHERE import_id <= (SELECT max_import_id FROM samples WHERE name = ?)) ORDER BY rowid",
            [sample],
        ),
        "judge_label_map": ("SELECT * FROM judge_label_map ORDER BY id", []),
        "sample_judge_counts": (
            "SELECT * FROM sample_judge_counts WHERE sample = ? ORDER BY ALL",
            [sample],
        ),
        "active_draws": ("SELECT * FROM active_draws WHERE sample = ? ORDER BY draw", [sample]),
        "rating_events": (
            f"SELECT * FROM rating_events WHERE {in_sample} ORDER BY event_id",
            [sample],
        ),
        "judge_ratings": (
            f"SELECT * FROM judge_ratings WHERE {in_sample} ORDER BY ALL",
            [sample],
        ),
    }
    sql, params = queries[table]
    return store.fetch_arrow(sql, params)


def load_bundle_table(store: Store, table: str, data: pa.Table) -> None:
    """Replace `table`'s rows by the bundle's (a fresh in-memory store, for the check)."""
    if table not in BUNDLE_TABLES:
        raise ValueError(f"not a bundle table: {table}")
    store.execute(f"DELETE FROM {table}")
    if data.num_rows:
        store.insert_arrow(table, data.column_names, data)
    if table == "traces":  # the attribute keys each import records: slices by an attribute
        store.execute("DELETE FROM trace_attribute_names")
        store.execute(
            "INSERT INTO trace_attribute_names SELECT DISTINCT unnest(json_keys(attributes)) "
            "FROM traces WHERE attributes IS NOT NULL"
        )


def otel_links(store: Store, sample: str) -> dict[str, tuple[Any, Any, Any, Any]]:
    """trace -> (OTel trace id, span id, gen_ai.response.id, reviewers) for the sample's traces."""
    rows = store.fetchall(
        "SELECT t.trace_id, json_extract_string(t.attributes, '$.otel_trace_id'), "
        "json_extract_string(t.attributes, '$.otel_span_id'), "
        "json_extract_string(t.attributes, '$.\"gen_ai.response.id\"'), "
        "(SELECT string_agg(DISTINCT e.reviewer, ',' ORDER BY e.reviewer) FROM label_events e "
        " WHERE e.trace_id = t.trace_id) "
        "FROM traces t WHERE t.trace_id IN (SELECT trace_id FROM sample_units WHERE sample = ?) "
        "ORDER BY t.trace_id",
        [sample],
    )
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
