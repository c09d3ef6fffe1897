"""Browser tests: a real chromium against `streamlit run` (marker `browser`)."""
