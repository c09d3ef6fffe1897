"""Agreement and calibration: how far reviewers agree, and how the judge does against their gold."""

import altair as alt
import pandas as pd
import streamlit as st

import ui
from annotate.calibration import agreement, calibration
from annotate.samples import list_samples
from annotate.store.assignments import judge_names

ui.require_role("lead", "auditor")
store = ui.store()
st.title("Agreement and calibration")

samples = [s["name"] for s in list_samples(store)]
if not samples:
    st.info("No samples yet.")
    st.stop()
left, middle, right = st.columns(3)
sample = left.selectbox("Sample", samples, key="calibration_sample")
scale = middle.selectbox("Label scale", ["binary", "full"], key="calibration_scale")
judges = judge_names(store)
judge = right.selectbox("Judge", judges, key="calibration_judge") if judges else None
by = st.multiselect(
    "Slice by", ["feature", "risk_category", "model"], default=["feature"], key="calibration_by"
)


def _row(name: str, stat: dict) -> dict:
    return {
        "statistic": name,
        "value": stat.get("value"),
        "low": stat.get("low"),
        "high": stat.get("high"),
        "units": stat.get("units"),
        "note": stat.get("reason") or stat.get("method") or "",
    }


st.subheader("Between reviewers")
result = agreement(store, sample, scale)
names = ("percent_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1")
rows = [_row(n, result[n]) for n in names] + [
    _row(f"cohen_kappa {p['a']}/{p['b']}", p) for p in result["cohen_kappa"]
]
st.caption(f"{result['units']} claims labelled by two or more reviewers")
st.dataframe(pd.DataFrame(rows), hide_index=True, key="calibration_agreement")

if judge is None:
    st.info("No judge verdicts in the store.")
    st.stop()
st.subheader(f"{judge} against gold (claim level; positive = unsupported)")
report = calibration(store, sample, judge, tuple(by))
confusion = report["confusion"]
cells = pd.DataFrame(
    [
        {"judge": "unsupported", "gold": "unsupported", "claims": confusion["tp"]},
        {"judge": "unsupported", "gold": "supported", "claims": confusion["fp"]},
        {"judge": "supported", "gold": "unsupported", "claims": confusion["fn"]},
        {"judge": "supported", "gold": "supported", "claims": confusion["tn"]},
    ]
)
matrix = (
    alt.Chart(cells, title="Confusion matrix")
    .mark_rect()
    .encode(x="gold:N", y="judge:N", color="claims:Q")
)
labels = alt.Chart(cells).mark_text(fontSize=16).encode(x="gold:N", y="judge:N", text="claims:Q")
st.altair_chart(matrix + labels, width="stretch")
measures = (
    "sensitivity",
    "specificity",
    "precision",
    "accuracy",
    "balanced_accuracy",
    "cohen_kappa",
)
st.dataframe(
    pd.DataFrame([_row(m, report[m]) for m in measures]),
    hide_index=True,
    key="calibration_judge_table",
)
slices = [
    {"slice": ", ".join(f"{k}={v}" for k, v in s["slice"].items()), "measure": m, **s[m]}
    for s in report["slices"]
    if "reason" not in s
    for m in ("sensitivity", "specificity")
    if s[m].get("value") is not None
]
if slices:
    frame = pd.DataFrame(slices)
    points = (
        alt.Chart(frame)
        .mark_point(filled=True)
        .encode(x=alt.X("value:Q", scale=alt.Scale(domain=[0, 1])), y="slice:N", color="measure:N")
    )
    bars = (
        alt.Chart(frame).mark_rule().encode(x="low:Q", x2="high:Q", y="slice:N", color="measure:N")
    )
    st.altair_chart(
        (bars + points).properties(title="Per slice, with 95% Wilson intervals"), width="stretch"
    )
too_few = [s for s in report["slices"] if "reason" in s]
for s in too_few:
    st.caption(f"{s['slice']}: {s['reason']}")
