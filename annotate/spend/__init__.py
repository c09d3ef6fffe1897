"""spend: what LLM calls actually used and cost (tokens of each kind from llm_calls, priced by
the judge_prices setting, batches at half price), per run, sample and rubric version.

May import llm, store/ and errors.
"""
