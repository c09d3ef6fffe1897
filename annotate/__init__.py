"""annotate: human calibration for LLM hallucination judges.

The library is the product; it never imports streamlit.
"""

__version__ = "0.1.0"
