"""The Import page's upload box, emptied once its file is imported (issue 36).

Streamlit keeps an uploaded file's bytes for as long as the box holds the file: in its uploaded
file manager, and in the widget's state (each run's UploadedFile shares those bytes). A
100,000-trace file kept the app 295 MB above its level before the import, until the browser tab
closed. Once imported the file is dropped from the manager, and the box gets a new key, so the
next run (`st.rerun`) has no widget of the old key and Streamlit drops its state too.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile

PREFIX = "import_file"  # the box's key: import_file_0, then import_file_1 after an import, ...
_ROUND = "import_file_round"


def upload_key() -> str:
    """The upload box's key in this session now."""
    return f"{PREFIX}_{st.session_state.get(_ROUND, 0)}"


def upload_box(label: str) -> UploadedFile | None:
    """The upload box, empty after each import of its file."""
    return st.file_uploader(label, key=upload_key())


def forget_upload(upload: UploadedFile) -> None:
    """Hand back an imported file's bytes and rerun the page (call it once the import's report
    is kept): the manager's record goes now, the box's state at the end of the rerun, whose box
    has a new key. Streamlit's own chat_input drops its files from the manager the same way;
    another manager (none is configured here) keeps the file until the session ends. The rerun
    is a ScriptControlException, which an `except Exception` does not catch."""
    context = get_script_run_ctx()
    manager = context.uploaded_file_mgr if context is not None else None
    if context is not None and isinstance(manager, MemoryUploadedFileManager):
        manager.remove_file(session_id=context.session_id, file_id=upload.file_id)
    upload.close()
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1
    st.rerun()
