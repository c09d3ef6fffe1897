"""SQL for where a sample stands on the lead's path: sampled, with claims, assigned, labelled.

Counts only; the steps and their wording are in annotate.workflow.path.
"""

from __future__ import annotations

from typing import Any

from annotate.store import Store


def sample_counts(store: Store, sample: str) -> dict[str, int]:
    """Traces in the store and in the sample; sampled traces with no claims, with assignments;
    current claims of the sample, those with a vote, with two or more votes; judge verdicts."""
    row = store.fetchone(
        "WITH units AS (SELECT DISTINCT trace_id FROM sample_units WHERE sample = ?), "
        "current AS (SELECT c.trace_id, c.claim_index FROM claims c JOIN units USING (trace_id)), "
        "voters AS (SELECT e.trace_id, e.claim_index, count(DISTINCT e.reviewer) AS n "
        "  FROM label_events e SEMI JOIN current c "
        "  ON c.trace_id = e.trace_id AND c.claim_index = e.claim_index GROUP BY ALL) "
        "SELECT (SELECT count(*) FROM traces), (SELECT count(*) FROM units), "
        "(SELECT count(*) FROM units u WHERE NOT EXISTS "
        "  (SELECT 1 FROM claims c WHERE c.trace_id = u.trace_id)), "
        "(SELECT count(DISTINCT a.trace_id) FROM assignments a "
        "  WHERE a.sample = ? AND a.active), "
        "(SELECT count(*) FROM current), (SELECT count(*) FROM voters), "
        "(SELECT count(*) FROM voters WHERE n >= 2), "
        "(SELECT count(*) FROM judge_verdicts v SEMI JOIN units u ON u.trace_id = v.trace_id)",
        [sample, sample],
    )
    names = (
        "traces",
        "sampled",
        "without_claims",
        "assigned",
        "claims",
        "labelled",
        "shared",
        "judge_verdicts",
    )
    return dict(zip(names, (int(v or 0) for v in row or ()), strict=True))


def reviewer_counts(store: Store, sample: str) -> list[dict[str, Any]]:
    """Per reviewer with active assignments: current claims assigned, claims done (a verdict
    or a skip), and the times of their verdicts in this sample, oldest first."""
    return store.fetch_dicts(
        "WITH mine AS (SELECT a.reviewer, c.trace_id, c.claim_index FROM assignments a "
        "  JOIN claims c USING (trace_id) WHERE a.sample = ? AND a.active) "
        "SELECT m.reviewer, count(*) AS claims, "
        "count(*) FILTER (WHERE EXISTS (SELECT 1 FROM label_events e WHERE e.reviewer = m.reviewer "
        "  AND e.trace_id = m.trace_id AND e.claim_index = m.claim_index) "
        "  OR EXISTS (SELECT 1 FROM skip_events s WHERE s.reviewer = m.reviewer "
        "  AND s.trace_id = m.trace_id AND s.claim_index = m.claim_index)) AS done, "
        "(SELECT list(e.created_at ORDER BY e.created_at) FROM label_events e "
        "  WHERE e.reviewer = m.reviewer AND e.trace_id IN "
        "  (SELECT trace_id FROM sample_units WHERE sample = ?)) AS times "
        "FROM mine m GROUP BY m.reviewer ORDER BY m.reviewer",
        [sample, sample],
    )


def store_traces(store: Store) -> int:
    return int(store.scalar("SELECT count(*) FROM traces") or 0)
