"""Streamlit widgets of one page each, kept out of pages/ so every page stays a short script.

Shared glue (store, session, errors, Markdown escaping) is in ui.py; the library is `annotate`.
"""
