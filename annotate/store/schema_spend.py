"""Migration 0023_llm_call_scope: which sample and rubric version each LLM call was made for,
so a run's spend can be totalled per sample and per version (issue 39). Judge calls made before
it get theirs from their run. Read by schema.py only."""

from __future__ import annotations

LLM_CALL_SCOPE = """
ALTER TABLE llm_calls ADD COLUMN sample VARCHAR;          -- the sample the call worked on
ALTER TABLE llm_calls ADD COLUMN rubric_version INTEGER;  -- the judge's version, or the revised one
UPDATE llm_calls SET sample = runs.sample, rubric_version = runs.rubric_version
FROM (
    SELECT DISTINCT calls.id, r.sample, r.rubric_version
    FROM (
        SELECT llm_call_id AS id, run_id FROM judge_verdicts WHERE llm_call_id IS NOT NULL
        UNION
        SELECT llm_call_id AS id, run_id FROM judge_failures WHERE llm_call_id IS NOT NULL
    ) calls JOIN judge_runs r ON r.id = calls.run_id
) runs
WHERE llm_calls.id = runs.id;
"""
