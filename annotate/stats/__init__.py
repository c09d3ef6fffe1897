"""stats: pure statistics on arrays and tables: agreement coefficients, Krippendorff's alpha,
intervals (Wilson, BCa bootstrap), gold rules, the judge vs gold, the alternative annotator test.

Numbers in, numbers out: imports numpy, scipy (scipy.special only: scipy.stats takes ~0.3-0.9 s
to import), krippendorff, threadpoolctl and `annotate.errors`; never store/,
never an LLM (anthropic, `annotate.judge.llm`), never streamlit (checked by import-linter).
"""
