"""Streamlit entry: page config, sign-in, and navigation over the pages the user's role may use.

st.navigation is called on every run. Before sign-in every URL of the app is the sign-in
form (the URL is kept, so /label opens Label after sign-in); after it, only the role's
pages are registered, so the others are neither listed nor reachable by URL. Each page
checks the role again on its own (ui.require_role).
"""

import streamlit as st

import ui
from widgets import warm_up

st.set_page_config(page_title="annotate", layout="wide")  # no page_icon: it would load from a CDN

# name -> (file stem in pages/, title); the stem is the page's URL. No icons: Streamlit
# fetches Material icons from a Google server, which would tell it who opened the app.
PAGE_FILES = {
    "home": ("home", "Home"),
    "label": ("label", "Label"),
    "import": ("import_traces", "Import"),
    "sample": ("sample", "Sample"),
    "assign": ("assign", "Assign"),
    "adjudicate": ("adjudicate", "Adjudicate"),
    "agreement": ("agreement", "Agreement"),
    "calibration": ("calibration", "Calibration"),
    "rates": ("rates", "Rates"),
    "rubric": ("rubric", "Rubric"),
    "canary": ("canary", "Canary"),
    "activity": ("activity", "Activity"),
    "users": ("users", "Users"),
    "questions": ("questions", "Questions"),
}
ROLE_PAGES = {
    "lead": [
        "home",
        "label",
        "import",
        "sample",
        "assign",
        "adjudicate",
        "questions",
        "agreement",
        "calibration",
        "rubric",
        "rates",
        "canary",
        "activity",
        "users",
    ],
    "reviewer": ["home", "label"],
    "auditor": ["home", "agreement", "calibration", "rubric", "rates", "canary", "activity"],
}


def _page(name: str) -> st.Page:
    stem, title = PAGE_FILES[name]
    return st.Page(f"pages/{stem}.py", title=title, default=name == "home")


def _sign_in_everywhere() -> list[st.Page]:
    """Before sign-in, each page's address shows the sign-in form and nothing else."""
    return [
        st.Page(ui.sign_in_page, title="Sign in", url_path=stem, default=name == "home")
        for name, (stem, _) in PAGE_FILES.items()
    ]


user = ui.current_user()
if user is None:
    st.navigation(_sign_in_everywhere(), position="hidden").run()
    st.stop()

pages = [_page(name) for name in ROLE_PAGES[user.role]]
current = st.navigation(pages, position="hidden")
with st.sidebar:  # our own list: Streamlit's would also list pages/ before the first sign-in
    for page in pages:
        st.page_link(page)
    st.divider()
    st.caption(ui.fmt("Signed in as **{}** ({})", user.name, user.role))
    st.button("Log out", key="app_logout", on_click=ui.log_out)
current.run()
warm_up.after_page(user)  # a lead's: the statistics pages' imports, once per process
