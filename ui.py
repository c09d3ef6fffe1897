"""The only Streamlit glue shared by pages: the cached store, session cursors, safe text.

One DuckDB connection per process (st.cache_resource), one cursor per browser
session (a connection cannot be shared between threads). Pages catch only
AnnotateError and show it; anything else is a bug.
"""

from __future__ import annotations

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


def show_text(label: str, text: str | None, key: str | None = None) -> None:
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
