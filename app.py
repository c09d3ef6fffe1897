"""Streamlit entry: page config, login, and navigation over the pages the user's role may use.

Pages a role may not use are not registered with st.navigation, so they are neither
listed nor reachable by URL.
"""

import streamlit as st

import ui

st.set_page_config(page_title="annotate", layout="wide")  # no page_icon: it would load from a CDN

PAGES = {
    "home": st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    "label": st.Page("pages/label.py", title="Label", icon=":material/rate_review:"),
    "import": st.Page("pages/import_traces.py", title="Import", icon=":material/upload_file:"),
    "sample": st.Page("pages/sample.py", title="Sample", icon=":material/casino:"),
    "assign": st.Page("pages/assign.py", title="Assign", icon=":material/group_add:"),
    "adjudicate": st.Page("pages/adjudicate.py", title="Adjudicate", icon=":material/gavel:"),
    "agreement": st.Page("pages/agreement.py", title="Agreement", icon=":material/groups:"),
    "calibration": st.Page("pages/calibration.py", title="Calibration", icon=":material/balance:"),
    "users": st.Page("pages/users.py", title="Users", icon=":material/manage_accounts:"),
}
ROLE_PAGES = {
    "lead": [
        "home",
        "label",
        "import",
        "sample",
        "assign",
        "adjudicate",
        "agreement",
        "calibration",
        "users",
    ],
    "reviewer": ["home", "label"],
    "auditor": ["home", "agreement", "calibration"],
}

user = ui.current_user()
if user is None:
    ui.login_or_first_lead()
    st.stop()

with st.sidebar:
    st.caption(f"Signed in as **{user.name}** ({user.role})")
    st.button("Log out", key="app_logout", on_click=ui.log_out)

st.navigation([PAGES[name] for name in ROLE_PAGES[user.role]]).run()
