"""The claims of a sample, listed: trace, index, text, offsets and version, the indexes
`import-labels` needs. Reads only; the SQL is in store/claim_list.py."""

from __future__ import annotations

from typing import Any

from annotate.claims.extraction import ClaimsError
from annotate.sampling.samples import known_sample_traces
from annotate.store import Store
from annotate.store.claim_list import sample_claims


def list_claims(store: Store, sample: str, trace_id: str | None = None) -> list[dict[str, Any]]:
    """Every current claim of the sample (of one of its traces); a trace not in the sample is a
    usage error, a trace without claims an empty list."""
    traces = known_sample_traces(store, sample)
    if trace_id is not None and trace_id not in set(traces):
        raise ClaimsError(
            f"trace {trace_id!r} is not in sample {sample!r}; "
            f"`annotate claims list --sample {sample}` lists the sample's claims"
        )
    return sample_claims(store, sample, trace_id)
