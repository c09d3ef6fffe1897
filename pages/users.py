"""Users: add accounts, deactivate them (their labels stay), and the labelling settings."""

import pandas as pd
import streamlit as st

import ui
from annotate.errors import AnnotateError
from annotate.labelling import reveal_judge_after_submit, set_reveal_judge_after_submit
from annotate.users import ROLES, add_user, list_users, set_active

user = ui.require_role("lead")
store = ui.store()
st.title("Users")

with st.form("users_add", clear_on_submit=True):
    left, middle, right = st.columns(3)
    name = left.text_input("Name", key="users_name")
    role = middle.selectbox("Role", ROLES, key="users_role")
    password = right.text_input("Password (8+ characters)", type="password", key="users_password")
    if st.form_submit_button("Add user"):
        try:
            add_user(store, name, role, password)
            st.success(f"Added {name} ({role}).")
        except AnnotateError as exc:
            ui.show_error(exc)

accounts = list_users(store)
st.dataframe(
    pd.DataFrame(
        [
            {"name": u.name, "role": u.role, "active": u.active, "external": u.external}
            for u in accounts
        ]
    ),
    hide_index=True,
    key="users_table",
)
others = [u.name for u in accounts if u.name != user.name and not u.external]
if others:
    left, right = st.columns(2)
    target = left.selectbox("Account", others, key="users_target")
    if right.button("Deactivate", key="users_deactivate"):
        set_active(store, target, False)
        st.rerun()
    if right.button("Reactivate", key="users_reactivate"):
        set_active(store, target, True)
        st.rerun()

st.subheader("Labelling")
reveal = st.toggle(
    "Show reviewers the judge's verdict after they submit (feedback; never before)",
    value=reveal_judge_after_submit(store),
    key="users_reveal_judge",
)
if reveal != reveal_judge_after_submit(store):
    set_reveal_judge_after_submit(store, reveal)
