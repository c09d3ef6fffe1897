"""The current claims of a sample's traces, as `annotate claims list` shows them: what
`import-labels` needs (trace, claim index) with the text, offsets and where each came from."""

from __future__ import annotations

from typing import Any

from annotate.store import Store

_LLM_VERSION = (
    "SELECT trace_id, arg_max(prompt_version, id) AS prompt_version FROM llm_calls "
    "WHERE purpose = 'claim_extraction' AND error IS NULL GROUP BY trace_id"
)


def sample_claims(store: Store, sample: str, trace_id: str | None = None) -> list[dict[str, Any]]:
    """Current claims of the sample's traces (of one trace when given), by trace and index.

    `version`: the extraction prompt's version for LLM claims, else how the claim was made."""
    where, params = "", [sample]
    if trace_id is not None:
        where, params = "AND c.trace_id = ?", [sample, trace_id]
    return store.fetch_dicts(
        "SELECT c.trace_id, c.claim_index, c.text, c.start_offset, c.end_offset, c.origin, "
        "CASE WHEN c.origin = 'llm' THEN coalesce(v.prompt_version, 'llm') ELSE c.origin END "
        "AS version FROM claims c "
        "JOIN (SELECT DISTINCT trace_id FROM sample_units WHERE sample = ?) u USING (trace_id) "
        f"LEFT JOIN ({_LLM_VERSION}) v USING (trace_id) WHERE TRUE {where} "
        "ORDER BY c.trace_id, c.claim_index",
        params,
    )
