"""Activity: every act with who did it and when, oldest first (leads and auditors)."""

import json

import pandas as pd
import streamlit as st

import ui
from annotate.accounts.activity import activity, activity_filters
from annotate.errors import counted

ui.require_role("lead", "auditor")
store = ui.store()
st.title("Activity")
st.caption(
    "Imports, samples, claims, assignments, verdicts, adjudications, settings, reports, sign-ins."
)

actors, kinds = activity_filters(store)
left, right = st.columns(2)
actor = left.selectbox("User", ["(everyone)", *actors], key="activity_actor")
kind = right.selectbox("Kind of act", ["(every kind)", *kinds], key="activity_kind")
rows = activity(
    store,
    actor=None if actor == "(everyone)" else actor,
    kind=None if kind == "(every kind)" else kind,
)
if not rows:
    st.info("Nothing recorded yet for this choice.")
    st.stop()
frame = pd.DataFrame(
    [{**row, "detail": json.dumps(row["detail"], ensure_ascii=False)} for row in rows]
)
st.dataframe(frame, hide_index=True, key="activity_table")
st.caption(ui.fmt("{}", counted(len(rows), "act")))
