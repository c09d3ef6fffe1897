"""Users: accounts (add, deactivate, new password: their sessions end), and the settings a lead
owns for sign-in, imports and labelling."""

import pandas as pd
import streamlit as st

import ui
from annotate.accounts.users import (
    ROLES,
    add_user,
    list_users,
    session_hours,
    set_active,
    set_password,
    set_session_hours,
    unlock,
)
from annotate.errors import AnnotateError
from annotate.ingest.inbox import import_folder, set_import_folder
from annotate.labelling.session import reveal_judge_after_submit, set_reveal_judge_after_submit
from widgets.ratings import ask_ratings_toggle

user = ui.require_role("lead")
store = ui.store()
st.title("Users")


def _add() -> None:
    """Form callbacks run before the rerun: the second click of a double click, which
    arrives with the cleared form, is dropped instead of answered with "name too short".
    Everything read from Streamlit is read before the act (see ui.answer_slot)."""
    slot, state = ui.answer_slot("users_add"), st.session_state
    name, password, role = state["users_name"], state["users_password"], state["users_role"]
    if (not name.strip() and not password) or ui.repeated(slot, name, password):
        return
    try:
        added = add_user(store, name, role, password, actor=user.name)
        ui.tell(slot, "success", ui.fmt("Added {} ({}).", added.name, added.role))
        ui.done(slot, name, password)
        state["users_name"] = state["users_password"] = ""  # see the form below
    except AnnotateError as exc:
        ui.tell(slot, "error", ui.md(ui.app_text(str(exc))))


def _show(form: str) -> None:
    kind, text = ui.told(form) or (None, "")
    if kind:
        (st.success if kind == "success" else st.error)(text)


# Not clear_on_submit: the browser would empty the fields at once, and a double Enter's second
# submit, merged by Streamlit with the first while that one waits, would carry only the empty
# fields: the account was never added. The callback empties them once the act is done.
with st.form("users_add"):
    left, middle, right = st.columns(3)
    left.text_input("Name", key="users_name")
    middle.selectbox("Role", ROLES, key="users_role")
    right.text_input("Password (8+ characters)", type="password", key="users_password")
    st.form_submit_button("Add user", on_click=ui.guard(_add))
_show("users_add")

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
    if right.button("Deactivate (ends their sessions)", key="users_deactivate"):
        set_active(store, target, False, actor=user.name)
        st.rerun()
    if right.button("Reactivate", key="users_reactivate"):
        set_active(store, target, True, actor=user.name)
        st.rerun()
    if right.button("Clear wrong-password waits", key="users_unlock"):  # earlier ones stop counting
        st.success(ui.fmt("{} signs in again without waiting.", unlock(store, target, user.name)))


def _new_password() -> None:
    slot = ui.answer_slot("users_password")
    whose, new = st.session_state["users_password_target"], st.session_state["users_new"]
    # a double click's second click: its Account may already be back at the first name
    if not new or ui.repeated(slot, new):
        return
    try:
        name = set_password(store, whose, new, actor=user.name)
        ui.tell(slot, "success", ui.fmt("{} has a new password; their sessions have ended.", name))
        ui.done(slot, new)
        st.session_state["users_new"] = ""
    except AnnotateError as exc:
        ui.tell(slot, "error", ui.md(ui.app_text(str(exc))))


with st.form("users_password_form"):  # emptied by its callback, as the form above
    st.caption(
        "A new password ends every open session of that account: yours too, if you choose "
        "yourself (this page then shows the sign-in form: sign in with the new password)."
    )
    left, right = st.columns(2)
    left.selectbox("Account", [*others, user.name], key="users_password_target")
    right.text_input("New password (8+ characters)", type="password", key="users_new")
    st.form_submit_button("Set the password", on_click=ui.guard(_new_password))
_show("users_password")

st.subheader("Settings")


def _setting(key: str, write) -> None:
    """A setting is written only when this lead changes it (a callback): a page drawn before
    another lead's change must not write its stale value back on an unrelated rerun."""
    slot, value = ui.answer_slot(key), st.session_state[key]
    if isinstance(value, str) and not value.strip():
        return  # an emptied folder field keeps the folder
    try:
        write(store, value, actor=user.name)
    except AnnotateError as exc:
        ui.tell(slot, "error", ui.md(ui.app_text(str(exc))))
    else:
        ui.tell(slot, "", "")


# Each run shows the stored value (another lead's change included); the callback ran first.
st.session_state["users_session_hours"] = session_hours(store)
st.session_state["users_import_folder"] = str(import_folder(store))
st.session_state["users_reveal_judge"] = reveal_judge_after_submit(store)
st.number_input("Sign-in lasts (hours)", 0.25, 720.0, step=1.0, key="users_session_hours",
                on_change=ui.guard(_setting),
                args=("users_session_hours", set_session_hours))  # fmt: skip
_show("users_session_hours")
st.text_input(
    "Import folder (the only server folder the Import page reads by path)",
    key="users_import_folder",
    on_change=ui.guard(_setting),
    args=("users_import_folder", set_import_folder),
)
_show("users_import_folder")
st.toggle("Show reviewers the judge's verdict after they submit (feedback; never before)",
          key="users_reveal_judge", on_change=ui.guard(_setting),
          args=("users_reveal_judge", set_reveal_judge_after_submit))  # fmt: skip
ask_ratings_toggle(store, _setting)
