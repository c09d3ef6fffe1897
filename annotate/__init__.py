"""annotate: human calibration for LLM hallucination judges.

The library is the product; it never imports streamlit. One package per step of the flow
(docs/architecture.md, "Code map"); the boundaries are import-linter contracts in pyproject.toml.
"""

__version__ = "0.1.0"
