"""The only Streamlit glue shared by pages: the cached store, session cursors, safe text.

One DuckDB connection per process (st.cache_resource), one cursor per browser
session (a connection cannot be shared between threads). Pages catch only
AnnotateError and show it; anything else is a bug.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
import secrets
import threading
import time
from collections import OrderedDict

import streamlit as st

from annotate.errors import AnnotateError
from annotate.store import Store, open_store, resolve_db_path


@st.cache_resource(show_spinner=False)
def _process_store(path: str) -> Store:
    return open_store(path)


def process_store() -> Store:
    """The process's one connection (for a worker thread to take a cursor of its own)."""
    return _process_store(str(resolve_db_path()))


def store() -> Store:
    """This browser session's cursor on the process's one connection."""
    path = str(resolve_db_path())
    key = f"store_cursor::{path}"
    if key not in st.session_state:
        st.session_state[key] = _process_store(path).session()
    cursor: Store = st.session_state[key]
    return cursor


def computed(function, *args, **kwargs):
    """`function(store, *args, **kwargs)`, computed once per change of the store and shared by
    every session and by the compute-ahead worker (widgets/ahead.py): a revisit, a widget
    that does not change the inputs, or a view the worker computed first reads the result (a
    copy). Keyed on the store's change mark (annotate.store.status.change_mark), so a new
    label, import, adjudication or setting computes afresh. Errors are raised, never cached.
    A session asking for what another session or the worker is computing waits for it."""
    from annotate.store.status import change_mark

    cursor = store()
    key = RESULTS.key(str(cursor.path), change_mark(cursor), function, args, kwargs)
    if RESULTS.has(key):
        return RESULTS.get_or_compute(key, lambda: function(cursor, *args, **kwargs))
    with st.spinner("Computing…"):
        return RESULTS.get_or_compute(key, lambda: function(cursor, *args, **kwargs))


class Results:
    """The pages' computed values for the process: at most `entries`, the least recently used
    dropped first; one computation per key at a time (a second asker waits for the first's
    value). Values are kept pickled and each reader gets its own copy, as st.cache_data did:
    a page may change what it was given."""

    def __init__(self, entries: int = 64) -> None:
        self._entries = entries
        self._values: OrderedDict[tuple, bytes] = OrderedDict()
        self._locks: dict[tuple, threading.Lock] = {}
        self._guard = threading.Lock()
        self.computed: list[str] = []  # the function names computed, oldest first (for tests)

    @staticmethod
    def key(path: str, mark: tuple, function, args: tuple, kwargs: dict) -> tuple:
        name = f"{function.__module__}.{function.__qualname__}"
        return (path, mark, name, pickle.dumps((args, sorted(kwargs.items())), protocol=5))

    def has(self, key: tuple) -> bool:
        with self._guard:
            return key in self._values

    def _read(self, key: tuple) -> bytes | None:
        with self._guard:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
            return found

    def get_or_compute(self, key: tuple, compute):
        found = self._read(key)
        if found is None:
            with self._guard:
                lock = self._locks.setdefault(key, threading.Lock())
            with lock:  # whoever computes this key now, the others wait for its value
                found = self._read(key)
                if found is None:
                    found = pickle.dumps(compute(), protocol=5)
                    with self._guard:
                        self._values[key] = found
                        self.computed.append(key[2])
                        del self.computed[:-256]
                        while len(self._values) > self._entries:
                            self._values.popitem(last=False)
                        self._locks.pop(key, None)
        return pickle.loads(found)

    def clear(self) -> None:
        with self._guard:
            self._values.clear()
            self.computed.clear()


RESULTS = Results()
CHARTS = Results(entries=128)


def chart(build, *args, where=None, key: str | None = None, width: str = "stretch") -> bool:
    """Draw the altair chart `build(*args)` (None: nothing to draw; returns whether it drew)."""
    spec = chart_spec(build, *args)
    if spec is not None:
        (where or st).vega_lite_chart(spec=spec, width=width, key=key)
    return spec is not None


def chart_spec(build, *args) -> dict | None:
    """The Vega-Lite spec st.altair_chart would send for `build(*args)` (Streamlit's own
    conversion, which takes its own lock), made once per distinct input and shared by every
    session and the compute-ahead worker: building and validating an altair chart took more
    of a Calibration revisit than all its numbers."""
    key = CHARTS.key("", (), build, args, {})
    return CHARTS.get_or_compute(key, lambda: _vega_lite(build(*args)))


def _vega_lite(found) -> dict | None:
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec as convert

    return None if found is None else convert(found)


def show_error(exc: AnnotateError) -> None:
    st.error(md(app_text(str(exc))))  # no icon: Material icons load from a Google server


# The library's messages name command-line flags (they are shared with the CLI); the app names
# the same things in its own words. Unlisted flags lose their dashes ("--source-format" ->
# "source format"); a whole command with flags becomes "the command line".
_APP_WORDS = {
    "n": "the number of traces",
    "as": "account",
    "baseline": "the offline baseline judge",
    "by": "strata",
    "map": "field mapping",
    "per-trace": "reviewers per trace",
    "top-up": "top up",
    "where": "filters",
    "max-rate": "maximum rate",
    "width": "interval width",
}
_COMMAND_WITH_FLAGS = re.compile(r"`annotate [^`]*--[^`]*`")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)")


def app_text(message: str) -> str:
    """A library message in the app's words: no command-line flags."""
    message = _COMMAND_WITH_FLAGS.sub("the command line", message)
    return _FLAG.sub(lambda m: _APP_WORDS.get(m[1], m[1].replace("-", " ")), message)


# Every ASCII punctuation character may be backslash-escaped in CommonMark; Streamlit's
# extras (KaTeX `$`, `:color[...]` directives, `:emoji:` codes) start with punctuation too.
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
# GitHub's autolinks (`www.x`, `http://x`, `a@b.c`) are found in the text after Markdown is
# parsed, so escapes do not stop them: an invisible word joiner inside each pattern does.
WORD_JOINER = "\u2060"
_AUTOLINKED = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?<=@)")


def md(value: object) -> str:
    """Untrusted data for a Markdown context (caption, heading, message, widget label):
    every character shows literally; no emphasis, link, image, math, colour or HTML."""
    text = " ".join(str(value).split())  # one line: no headings, lists or blocks
    text = _AUTOLINKED.sub(WORD_JOINER, text)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def fmt(template: str, *values: object, **named: object) -> str:
    """`template` is ours (may hold Markdown); every value is data and is escaped by md()."""
    return template.format(*(md(v) for v in values), **{k: md(v) for k, v in named.items()})


def fingerprint(values: tuple) -> str:
    text = json.dumps(values, default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


# Which roles the page allows: a download's callback checks them again (downloads.py).
PAGE_ROLES = "ui_page_roles"


def lazy_panel(label: str, key: str):
    """A panel used now and then: a toggle, and below it, while it is on, a container to draw
    the panel in (None while off). Its content costs nothing on the runs where it is off. A
    toggle, not an expander: on the Label page each closed expander cost chromium about 15 ms
    of main thread on every key press (three of them: 122 ms a press, 71 ms with toggles;
    tests/bench/bench_label_latency.py), a toggle that did not change is kept as it was."""
    panel_toggle(label, key)
    return opened(key)


def lazy_tabs(names, key: str) -> dict:
    """Tabs of which only the open one runs: {name: its container while open, else None}. A
    tab change reruns the page (st.tabs' on_change="rerun"); a closed tab's content is neither
    computed nor sent, so a long page costs what its open tab costs. The open tab's container
    has the key `{key}_{n}` (n: the tab's position), for the browser to find."""
    tabs = st.tabs(list(names), key=key, on_change="rerun")
    return {
        name: tab.container(key=f"{key}_{n}") if tab.open else None
        for n, (name, tab) in enumerate(zip(names, tabs, strict=True))
    }


def panel_toggle(label: str, key: str) -> None:
    """A lazy panel's toggle drawn apart from the panel (`opened` draws it): outside a
    fragment, so the fragment's reruns do not send it again."""
    st.toggle(label, key=key)


def opened(key: str):
    """The container to draw the panel of `panel_toggle(..., key)` in while it is on, else None."""
    return st.container() if st.session_state.get(key) else None


def show_text(label: str, text: str | None) -> None:
    """Untrusted trace text: literal characters, never markdown or HTML."""
    st.caption(md(label))
    st.text(text if text else "(empty)")


# --- sign-in -------------------------------------------------------------------------------
# The session token lives in this browser session's state and in a cookie, so that a reload
# or a deep link (/label) keeps the user signed in. The token is random and opaque; only its
# hash is stored, and every run checks it against the store, so Log out, deactivation and a
# password change end it at the next action.

TOKEN_KEY = "auth_token"
COOKIE = "annotate_session"


def current_user():  # -> annotate.accounts.users.User | None
    """The signed-in user of this browser session, checked against the store on every call."""
    from annotate.accounts.users import session_user

    token = st.session_state.get(TOKEN_KEY) or _cookie_token()
    if not token:
        return None
    user = session_user(store(), token)
    if user is None:
        _forget_session(clear_cookie=True)
        return None
    st.session_state[TOKEN_KEY] = token
    return user


def _cookie_token() -> str | None:
    if st.session_state.get("auth_cookie_cleared"):
        return None  # this session logged out; the browser still sent the old cookie
    try:
        token = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no browser request behind this run (AppTest)
        return None
    return token if isinstance(token, str) else None


def _run_through_app() -> None:
    """Until app.py has called st.navigation once in the process, Streamlit runs a URL's file
    of pages/ alone (its first multipage mode): on a freshly started server a deep link such
    as /label drew the page without app.py's sidebar (no page list, no "Signed in as", no Log
    out). Leave that mode and run again: app.py then runs and routes the same URL."""
    from streamlit.runtime.pages_manager import PagesManager

    # AppTest opens a page by running its file alone on purpose, and has no browser request
    if PagesManager.uses_pages_directory and st.context.headers:
        PagesManager.uses_pages_directory = False  # what st.navigation itself sets
        st.rerun()


def require_role(*roles: str):
    """Every page's first line: the sign-in form for a visitor, a refusal for a wrong role.

    Runs even when Streamlit runs a file of pages/ directly (before app.py has called
    st.navigation once in this process), so no page depends on app.py for its guard."""
    _run_through_app()
    user = current_user()
    if user is None:
        sign_in_page()
        st.stop()
    if user.role not in roles:
        st.error("This page is not available to your role.")
        st.stop()
    st.session_state[PAGE_ROLES] = roles  # a download's callback checks them again
    _sync_cookie()
    return user


def guard(callback):
    """Wrap a widget callback: it runs only for a user whose session is still valid.

    Callbacks run before the page script, so a page's own check would come too late."""

    def guarded(*args, **kwargs):
        if current_user() is None:
            return None
        return callback(*args, **kwargs)

    return guarded


# A form's answer ("Added rita (reviewer).") is kept per browser session in the process, and
# written without a Streamlit call: a second Enter reaching the server while the first
# submit's callback runs makes Streamlit stop that callback at its next Streamlit call (even a
# read of st.session_state), after the act but before its answer was kept; the page then
# showed the previous answer, or none. So a callback takes its slot first, acts, then tells.
_TOLD: dict[tuple[str, str], tuple[str, str]] = {}


def answer_slot(form: str) -> tuple[str, str]:
    """Where `form`'s answer is kept for this browser session: take it before acting."""
    return (str(st.session_state.get(TOKEN_KEY)), form)


def tell(slot: tuple[str, str], kind: str, text: str) -> None:
    """Keep an answer (kind: success / error; "" clears it) until the form is used again."""
    _TOLD[slot] = (kind, text)


def told(form: str) -> tuple[str, str] | None:
    return _TOLD.get(answer_slot(form))


# A double submit's second press can leave the browser before the first one's rerun has
# cleared the whole form: it carries some or all of the same values again, and the act fails
# ("exists", "name too short") with an error that replaces the first press's answer. What a
# form just did is kept as a fingerprint per value (no password is kept), with when: values
# each empty or the same within REPEAT_SECONDS are that second press, and change nothing.
_DONE: dict[tuple[str, str], tuple[list[str], float]] = {}
# 60 s, not 10: a lead-path run on a loaded CI machine once answered a double Enter's second
# press with "exists already" (the first had added the account); the only way found for the
# echo to pass unrecognised is the time between the first press's act and the second's
# callback, which a loaded two-core machine can stretch. Answering a deliberate second submit
# of the same values within a minute with the first answer is still true.
REPEAT_SECONDS = 60.0


def repeated(slot: tuple[str, str], *values: object) -> bool:
    """Whether `values` echo what this form did a moment ago: answer as the first press did."""
    last = _DONE.get(slot)
    if last is None or time.monotonic() - last[1] >= REPEAT_SECONDS:
        return False
    return all(
        value in ("", None) or fingerprint((value,)) == before
        for value, before in zip(values, last[0], strict=True)
    )


def done(slot: tuple[str, str], *values: object) -> None:
    _DONE[slot] = ([fingerprint((value,)) for value in values], time.monotonic())


def session_ended() -> bool:
    """True once a guarded callback or a page found this session's token no longer valid
    (it forgot the session then): no store query, for the fragment's hot path."""
    return TOKEN_KEY not in st.session_state


def log_out() -> None:
    from annotate.accounts.users import end_session

    end_session(store(), st.session_state.get(TOKEN_KEY) or _cookie_token())
    _forget_session(clear_cookie=True)


def _forget_session(clear_cookie: bool) -> None:
    for key in list(st.session_state):
        if not str(key).startswith("store_cursor::"):
            del st.session_state[key]
    if clear_cookie:
        st.session_state["auth_cookie_cleared"] = True


def _sync_cookie() -> None:
    """Write the session cookie once after sign-in (a script of ours, no data in it)."""
    token = st.session_state.pop("auth_set_cookie", None)
    if token and re.fullmatch(r"[A-Za-z0-9_-]+", token):
        from annotate.accounts.users import session_hours

        seconds = int(session_hours(store()) * 3600)
        _cookie_script(f"{COOKIE}={token}; path=/; max-age={seconds}; SameSite=Strict")


def _clear_cookie() -> None:
    if st.session_state.get("auth_cookie_cleared"):
        _cookie_script(f"{COOKIE}=; path=/; max-age=0; SameSite=Strict")


def _cookie_script(cookie: str) -> None:
    st.html(f"<script>document.cookie = {cookie!r};</script>", unsafe_allow_javascript=True)


def sign_in_page() -> None:
    """The sign-in form, or on a store with no accounts the form that creates the first lead."""
    from annotate.accounts.users import (
        AuthError,
        authenticate,
        create_first_lead,
        has_accounts,
        start_session,
    )

    _clear_cookie()
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
        st.subheader("Sign in")
    with st.form("login_form"):
        name = st.text_input("User name", key="login_name")
        password = st.text_input("Password", type="password", key="login_password")
        repeat = (
            st.text_input("Repeat the password", type="password", key="login_repeat")
            if first
            else None
        )
        submitted = st.form_submit_button("Create lead" if first else "Sign in", type="primary")
    if not submitted:
        return
    try:
        if first:
            if password != repeat:
                st.error("The two passwords differ.")
                return
            user = create_first_lead(store(), name, password)
        else:
            user = authenticate(store(), name, password, origin=_sign_in_origin())
        token = start_session(store(), user.name)
    except AuthError as exc:
        show_error(exc)
        return
    st.session_state.pop("auth_cookie_cleared", None)
    st.session_state[TOKEN_KEY] = token
    st.session_state["auth_set_cookie"] = token
    st.rerun()


def _sign_in_origin():  # -> annotate.accounts.throttle.Try
    """Where this sign-in comes from: this browser session's random id (a browser that has not
    failed always has its password checked) and the client's address."""
    from annotate.accounts.throttle import Try

    browser = st.session_state.setdefault("login_browser", secrets.token_urlsafe(12))
    try:
        address = st.context.ip_address
    except Exception:  # noqa: BLE001 - no browser request behind this run (AppTest)
        address = None
    return Try(browser, address if isinstance(address, str) else None)
