"""claims: the claims of a sampled trace: provided by the trace, split by sentence, or extracted
by an LLM through `annotate.judge.llm`; each new set a new claim version.

May import sampling/, accounts/, llm, store/ and errors.
"""
