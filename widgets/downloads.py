"""Files a page offers: kept against the numbers they hold (keep_prepared / prepared), and
every download of the app (download_button), handed over the signed-in session's websocket.
"""

from __future__ import annotations

import base64
import json

import streamlit as st

from ui import PAGE_ROLES, current_user, fingerprint, guard


def keep_prepared(key: str, files: dict, *chose: object) -> None:
    """Keep files a user prepared against the numbers they hold and what chose them."""
    st.session_state[key] = (fingerprint(chose), files)


def prepared(key: str, *chose: object) -> dict | None:
    """The files kept under `key` if they still hold what the page shows: a change of any
    input (a level, a part, new labels) drops them instead of offering them for what is no
    longer on the page. Nothing is hashed on a visit that prepared nothing."""
    held = st.session_state.get(key)
    return held[1] if held and held[0] == fingerprint(chose) else None


# --- downloads -----------------------------------------------------------------------------
# st.download_button serves its bytes at /media/<hash of the content>, to anyone, with no
# cookie, after Log out and after the browser closed. Here the bytes go only over the signed-in
# session's own websocket: a click runs a guarded callback (session valid, role allowed) that
# makes the bytes, and the next run hands them to the page, which saves them from a blob: URL
# it revokes at once. No server URL ever holds a file.


def download_button(label: str, data, *, file_name: str, mime: str, key: str, where=None) -> None:
    """Every download of the app. `data` is bytes, text, or a callable making them on click."""
    (where or st).button(
        label, key=key, on_click=guard(_make_download), args=(key, data, file_name, mime)
    )
    ready = st.session_state.pop(f"{key}::bytes", None)
    if ready is not None:
        _save_in_browser(*ready)


def _make_download(key: str, data, file_name: str, mime: str) -> None:
    user = current_user()
    if user is None or user.role not in st.session_state.get(PAGE_ROLES, ()):
        return
    made = data() if callable(data) else data
    made = made.encode() if isinstance(made, str) else bytes(made)
    st.session_state[f"{key}::bytes"] = (made, file_name, mime)


def _save_in_browser(data: bytes, file_name: str, mime: str) -> None:
    payload = json.dumps(
        {"data": base64.b64encode(data).decode(), "name": file_name, "mime": mime}
    ).replace("</", "<\\/")
    st.html(
        "<script>(() => {"
        f"const file = {payload};"
        "const bytes = Uint8Array.from(atob(file.data), (c) => c.charCodeAt(0));"
        "const url = URL.createObjectURL(new Blob([bytes], {type: file.mime}));"
        "const link = document.createElement('a');"
        "link.href = url; link.download = file.name; link.className = 'annotate-download';"
        "document.body.appendChild(link); link.click(); link.remove();"
        "URL.revokeObjectURL(url);"
        "})();</script>",
        unsafe_allow_javascript=True,
    )
