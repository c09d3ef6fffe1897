"""The tracing-server parts of two pages (leads only): pulling a Phoenix project or an MLflow
experiment on the Import page, and sending a sample's verdicts and card back on the Rates
page, after a preview of how many annotations will be written."""

from __future__ import annotations

from typing import Any

import streamlit as st

import ui
from annotate.connectors import KINDS
from annotate.errors import AnnotateError, counted
from annotate.store import Store

NAMES = {"phoenix": "Phoenix project", "mlflow": "MLflow experiment"}
ADDRESSES = {"phoenix": "http://localhost:6006", "mlflow": "http://localhost:5000"}


def server_fields(prefix: str) -> tuple[str, str, str]:
    """(kind, URL, project or experiment) as the lead typed them."""
    left, middle, right = st.columns(3)
    kind = left.selectbox("Server", KINDS, key=f"{prefix}_server_kind")
    url = middle.text_input("URL", placeholder=ADDRESSES[kind], key=f"{prefix}_server_url")
    name = right.text_input(NAMES[kind], key=f"{prefix}_server_name")
    return kind, url.strip(), name.strip()


def pull_section(store: Store, user: Any) -> None:
    """Import: a server's traces, new ones only, with progress and the report."""
    st.subheader("From a tracing server")
    st.caption(
        "An Arize Phoenix project or an MLflow experiment, through the server's own client: only "
        "traces not pulled before are fetched; each keeps the tool's trace and span ids, so the "
        "Rates page can send the reviewers' verdicts back onto it."
    )
    kind, url, name = server_fields("import")
    if not st.button("Pull new traces", key="import_server_run"):
        return
    from annotate.connectors.connect import connect
    from annotate.connectors.pull import pull

    bar = st.progress(0.0, text="listing the server's traces…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=ui.fmt("pulled {} of {} new traces", done, total))

    try:
        report = pull(store, connect(kind, url, name), progress=progress, actor=user.name)
    except AnnotateError as exc:
        ui.show_error(exc)
        return
    finally:
        bar.empty()
    shown = st.warning if report.errors else st.success
    shown(ui.fmt("{}: {} listed, {} pulled before, {} pulled now; {} imported, {} bad spans",
                 report.source, report.listed, report.known, report.pulled,
                 counted(report.imported, "call"), len(report.errors)))  # fmt: skip
    if report.errors:
        st.dataframe([dict(zip(("trace", "field", "message"), e, strict=True)) for e in report.errors],
                     hide_index=True, key="import_server_errors")  # fmt: skip
    if report.without_call:
        st.caption(
            ui.fmt(
                "{} held no model call with an answer", counted(len(report.without_call), "trace")
            )
        )


def push_section(store: Store, sample: str, judge: str | None, user: Any) -> None:
    """Rates: preview, then send, the sample's verdicts and card to the server its traces came from."""
    kind, url, name = server_fields("rates")
    from annotate.connectors.connect import connect
    from annotate.connectors.push import plan_push, push

    left, right = st.columns(2)
    try:
        if left.button("Preview", key="rates_server_preview"):
            st.session_state["rates_server_plan"] = plan_push(
                store, connect(kind, url, name), sample, judge
            ).as_json()
        preview = st.session_state.get("rates_server_plan")
        if preview is not None:
            st.caption(ui.fmt(
                "{}: {} and {} to write ({} unchanged since the last send); calibration card {}; "
                "{} of the sample did not come from this server", preview["destination"],
                counted(preview["human"], "human verdict"), counted(preview["llm"], "judge verdict"),
                preview["unchanged"], "to write" if preview["card"] else "unchanged",
                counted(preview["not_from_this_server"], "trace"),
            ))  # fmt: skip
        if right.button("Send", type="primary", key="rates_server_send", disabled=preview is None):
            sent = push(store, connect(kind, url, name), sample, judge, user.name).as_json()
            st.session_state.pop("rates_server_plan", None)
            st.success(ui.fmt("Sent {} and {}", counted(sent["human"], "human verdict"),
                              counted(sent["llm"], "judge verdict")))  # fmt: skip
    except AnnotateError as exc:
        ui.show_error(exc)
