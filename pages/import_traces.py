"""Import: upload or name a file, pick format and field mapping, watch progress, see rejects."""

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

import ui
from annotate.crash_log import record_crash
from annotate.errors import AnnotateError, UsageError, counted
from annotate.ingest import FORMATS
from annotate.ingest.call_context import CONTEXT_KINDS
from annotate.ingest.importer import ImportReport, import_traces, parse_mapping
from annotate.ingest.inbox import import_folder, inbox_files, inbox_path
from annotate.ingest.labels import import_labels
from annotate.store import resolve_db_path
from annotate.store.imports import import_errors
from widgets import connectors as connector_widgets
from widgets.uploads import forget_upload, upload_box

user = ui.require_role("lead")
st.title("Import")
st.caption(
    "Trace files (JSON Lines, a JSON array, CSV, Parquet, OTLP JSON, agent transcripts) or "
    "human labels made elsewhere. Bad rows are reported by line; good rows are kept."
)

kind = st.radio("What", ["traces", "labels"], horizontal=True, key="import_kind")
upload = upload_box("Upload a file")
folder = import_folder(ui.store())
path_text = st.text_input(
    "…or a file in the import folder (path relative to it)",
    key="import_path",
    help=ui.md(f"The app reads server files only from {folder}; a lead sets it on the Users page."),
)
if found := inbox_files(ui.store()):
    st.caption(ui.fmt("In the import folder: {}", ", ".join(found[:20])))
fmt = st.selectbox("Format", ["detect from content", *FORMATS], key="import_format")
mapping_text = st.text_area(
    "Field mapping, one FIELD=SOURCE a line (e.g. response=output.text)",
    key="import_map",
    disabled=kind == "labels",
    help="SOURCE is keys joined by dots (`input.messages.0.content`). A key whose name holds "
    'dots goes in double quotes: `model="attributes.llm.model_name"`; a row that has the whole '
    "unquoted SOURCE as one key reads that key. A row without its SOURCE is rejected on its "
    "line; a null or empty value leaves the field empty.",
)

context_kinds = st.multiselect(
    "Context from",
    CONTEXT_KINDS,
    default=list(CONTEXT_KINDS),
    key="import_context",
    disabled=kind == "labels",
    help="For calls found in spans (OTLP, tracing tools' exports): what counts as the source "
    "material the model was given. The prompt counts only for a call with none of the others.",
)


def _run(path: Path, name: str, slot) -> ImportReport:
    bar = slot.progress(0.0, text="reading…")

    def progress(rows: int, fraction: float) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=ui.fmt("read {} rows", f"{rows:,}"))

    chosen = None if fmt == "detect from content" else fmt
    store = ui.store()
    if kind == "labels":
        return import_labels(store, path, chosen, progress=progress, name=name, actor=user.name)
    mapping = parse_mapping(line for line in mapping_text.splitlines() if line.strip())
    if not context_kinds:
        raise UsageError("choose at least one kind of context under Context from")
    return import_traces(
        store, path, chosen, mapping, progress=progress, name=name, actor=user.name,
        context=frozenset(context_kinds),
    )  # fmt: skip


if st.button("Import", type="primary", key="import_run"):
    st.session_state.pop("import_report", None)  # an error must not leave the last report up
    slot = st.empty()  # the progress bar: emptied whatever happens, never left at "reading…"
    try:
        if upload is not None and path_text.strip():
            st.warning("Both an upload and a path are given: remove one, then Import.")
        elif upload is not None:
            with tempfile.TemporaryDirectory() as folder:
                target = Path(folder) / Path(upload.name).name
                target.write_bytes(upload.getvalue())
                st.session_state["import_report"] = _run(target, upload.name, slot)
            forget_upload(upload)  # imported: its bytes go, the page reruns with an empty box
        elif path_text.strip():
            target = inbox_path(ui.store(), path_text)
            st.session_state["import_report"] = _run(target, path_text.strip(), slot)
        else:
            st.warning("Upload a file or give a path first.")
    except AnnotateError as exc:
        ui.show_error(exc)
    except Exception as exc:  # a bug: one line here, the traceback in the log file
        st.error(ui.md(record_crash(exc, "The import", resolve_db_path())))  # no icon, as ui
    finally:
        slot.empty()

report = st.session_state.get("import_report")
if report is not None:
    outcome = st.success if report.is_clean else st.warning
    outcome(
        ui.fmt(
            "{} ({}): imported {}, rejected {}, duplicates {}, conflicts {} (import {})",
            report.path,
            report.format,
            report.imported,
            report.rejected,
            report.duplicates,
            report.conflicts,
            report.import_id,
        )
    )
    for column, (name, value) in zip(st.columns(4), report.counts().items(), strict=True):
        column.metric(name.capitalize(), f"{value:,}")
    if report.attached:
        st.caption(ui.fmt("{} evaluations attached to calls imported earlier", report.attached))
    if origins := ", ".join(f"{o}: {n:,}" for o, n in sorted(report.context_from.items())):
        st.caption(ui.fmt("Traces by where their context came from: {}", origins))
    if report.warnings:
        shown = len(report.warnings)
        listed = "" if report.warned == shown else f"; the first {shown:,} are listed"
        st.caption(
            ui.fmt(
                "{} on rows imported anyway (claim offsets repaired, unknown keys ignored){}",
                counted(report.warned, "warning"),
                listed,
            )
        )
        rows = pd.DataFrame([w.as_json() for w in report.warnings])
        st.dataframe(rows, hide_index=True, key="import_warnings")
    if not report.is_clean:
        st.subheader("Rejected rows")
        errors = import_errors(ui.store(), report.import_id)
        st.dataframe(
            pd.DataFrame([e.as_json() for e in errors]), hide_index=True, key="import_errors"
        )
    if report.imported and kind == "traces":
        st.caption("Next: draw a sample of the traces, on the Sample page.")
        st.page_link("pages/sample.py", label="Go to Sample")
connector_widgets.pull_section(ui.store(), user)
