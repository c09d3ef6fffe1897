"""Streamlit entry: page config and navigation over pages/. No logic lives here."""

import streamlit as st

st.set_page_config(page_title="annotate", page_icon=":material/fact_check:", layout="wide")

pages = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/import_traces.py", title="Import", icon=":material/upload_file:"),
    st.Page("pages/sample.py", title="Sample", icon=":material/casino:"),
]
st.navigation(pages).run()
