"""The only Streamlit glue shared by pages: the cached store, session cursors, safe text.

One DuckDB connection per process (st.cache_resource), one cursor per browser
session (a connection cannot be shared between threads). Pages catch only
AnnotateError and show it; anything else is a bug.
"""

from __future__ import annotations

import html
import re

import streamlit as st

from annotate.errors import AnnotateError
from annotate.store import Store, open_store, resolve_db_path


@st.cache_resource(show_spinner=False)
def _process_store(path: str) -> Store:
    return open_store(path)


def store() -> Store:
    """This browser session's cursor on the process's one connection."""
    path = str(resolve_db_path())
    key = f"store_cursor::{path}"
    if key not in st.session_state:
        st.session_state[key] = _process_store(path).session()
    cursor: Store = st.session_state[key]
    return cursor


def show_error(exc: AnnotateError) -> None:
    st.error(str(exc), icon=":material/error:")


def show_text(label: str, text: str | None) -> None:
    """Untrusted trace text: literal characters, never markdown or HTML."""
    st.caption(label)
    st.text(text if text else "(empty)")


def describe_filters(filters: dict) -> str:
    """A stored sample's filters as one readable line."""
    parts = [
        f"{k}={','.join(v)}" for k, v in {**filters["columns"], **filters["attributes"]}.items()
    ]
    parts += [f"{k}={filters[k]}" for k in ("since", "until") if filters.get(k)]
    if filters.get("judge"):
        parts.append("judge=" + ",".join(filters["judge"]))
    return "; ".join(parts) or "(none)"


def current_user():  # -> annotate.users.User | None
    return st.session_state.get("user")


def require_role(*roles: str):
    """Guard inside a page too (defence in depth behind st.navigation)."""
    user = current_user()
    if user is None or user.role not in roles:
        st.error("This page is not available to your role.")
        st.stop()
    return user


def log_out() -> None:
    for key in list(st.session_state):
        if not str(key).startswith("store_cursor::"):
            del st.session_state[key]


def login_or_first_lead() -> None:
    """The login form, or on a store with no accounts the form that creates the first lead."""
    from annotate.users import AuthError, authenticate, create_first_lead, has_accounts

    try:
        first = not has_accounts(store())
    except AnnotateError as exc:
        show_error(exc)
        return
    st.title("annotate")
    if first:
        st.subheader("Create the first lead")
        st.caption(
            "This store has no accounts yet. The first account is a lead: it can do everything."
        )
    else:
        st.subheader("Log in")
    with st.form("login_form"):
        name = st.text_input("User name", key="login_name")
        password = st.text_input("Password", type="password", key="login_password")
        repeat = (
            st.text_input("Repeat the password", type="password", key="login_repeat")
            if first
            else None
        )
        submitted = st.form_submit_button("Create lead" if first else "Log in", type="primary")
    if not submitted:
        return
    try:
        if first:
            if password != repeat:
                st.error("The two passwords differ.")
                return
            user = create_first_lead(store(), name, password)
        else:
            user = authenticate(store(), name, password)
    except AuthError as exc:
        show_error(exc)
        return
    st.session_state["user"] = user
    st.rerun()


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    """Escape every character of untrusted text; wrap the given spans in <mark>."""
    out, cursor = [], 0
    for start, end in sorted(spans):
        if start < cursor:
            continue
        out += [html.escape(text[cursor:start]), "<mark>", html.escape(text[start:end]), "</mark>"]
        cursor = end
    out.append(html.escape(text[cursor:]))
    return "".join(out)


def _term_spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
    spans = []
    for term in terms:
        # whole tokens only: "3" must not mark the 3 inside "2026-03-01"
        for match in re.finditer(r"(?<![\w.])" + re.escape(term) + r"(?![\w])", text):
            spans.append((match.start(), match.end()))
    return spans


_BOX = "white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 0.9rem; padding: 0.5rem; border: 1px solid rgba(128,128,128,0.3); border-radius: 0.3rem;"


def show_claim(view) -> None:  # view: annotate.labelling.ClaimView
    """Request, response with the claim marked, and the contexts with the claim's numbers,
    names and dates marked. All text is HTML-escaped: it shows literally, nothing runs."""
    trace, claim = view.trace, view.claim
    response = trace["response"] or ""
    start, end = claim.get("start_offset"), claim.get("end_offset")
    if start is None or end is None or response[start:end] != claim["text"]:
        found = response.find(claim["text"])
        start, end = (found, found + len(claim["text"])) if found >= 0 else (None, None)
    spans = [(start, end)] if start is not None else []
    st.caption(
        f"Trace {trace['trace_id']} · {trace.get('feature') or ''} · claim {view.claim_index + 1}"
    )
    st.markdown("**Claim**")
    st.html(
        f'<div class="annotate-claim" style="{_BOX} background: rgba(255,220,0,0.15)">{html.escape(claim["text"])}</div>'
    )
    st.markdown("**Request**")
    st.html(
        f'<div class="annotate-request" style="{_BOX}">{html.escape(trace.get("request") or "(none)")}</div>'
    )
    st.markdown("**Response**")
    st.html(f'<div class="annotate-response" style="{_BOX}">{_marked(response, spans)}</div>')
    st.markdown(f"**Context** ({len(trace['contexts'])} items)")
    terms = view.salient_terms
    for item in trace["contexts"]:
        text = item["text"]
        st.html(
            f'<div class="annotate-context" style="{_BOX} max-height: 22rem; overflow-y: auto">'
            f"<b>{html.escape(item['source'] or 'context ' + str(item['position'] + 1))}</b>\n"
            f"{_marked(text, _term_spans(text, terms))}</div>"
        )


def stat_row(name: str, stat: dict) -> dict:
    """One statistic ({"value", "low", "high", "units"} or a reason) as a table row."""
    return {
        "statistic": name,
        "value": stat.get("value"),
        "low": stat.get("low"),
        "high": stat.get("high"),
        "units": stat.get("units"),
        "note": stat.get("reason") or stat.get("method") or "",
    }
