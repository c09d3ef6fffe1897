"""The Rubric page's versions side by side (two judges: the paired comparison of
annotate.judge.rubrics.compare, the numbers `annotate rubric compare` prints; more: each one's
statistics) and the version's judge runs with their spend."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from annotate.errors import AnnotateError, counted
from annotate.judge.rubrics.compare import COMPARE_PARTS, compare_versions, comparison_rows
from annotate.judge.rubrics.loop import compare, rubric_judges
from annotate.spend.pricing import judge_runs_spend
from annotate.store import Store
from widgets import claim_display


def show_versions(versions: list[dict]) -> None:
    """Each judge's card statistics on the compared claims, with their own intervals."""
    rows = [
        {"judge": row["judge"], **claim_display.stat_row(name, row[name])}
        for row in versions
        for name in ("cohen_kappa", "sensitivity", "specificity")
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="rubric_compare_table")


def side_by_side(store: Store, samples: list[str]) -> None:
    chosen = st.multiselect(
        "Judges (rubric version : model)", rubric_judges(store), key="rubric_compare"
    )
    sample = st.selectbox("On the claims of", samples, key="rubric_compare_sample")
    part = st.selectbox("Part", COMPARE_PARTS, key="rubric_compare_part")
    if len(chosen) < 2 or not sample:
        return
    try:
        if len(chosen) == 2:
            paired(compare_versions(store, chosen[0], chosen[1], sample, part))
        else:
            result = compare(store, chosen, sample, part)
            st.caption(ui.fmt("{} judged by every one", counted(result["claims"], "claim")))
            show_versions(result["judges"])
    except AnnotateError as exc:
        ui.show_error(exc)


def paired(result: dict) -> None:
    """Each version's statistics, the paired differences B - A, McNemar, the flips."""
    st.caption(
        ui.fmt("A {} vs B {}: {} with gold, judged by both", result["a"], result["b"],
               counted(result["claims"], "claim"))
    )  # fmt: skip
    show_versions(result["versions"])
    rows = pd.DataFrame(comparison_rows(result))
    st.dataframe(rows, hide_index=True, key="rubric_compare_paired")
    test = result["difference"]["mcnemar"]
    st.caption(
        ui.fmt("McNemar (exact): {} right to wrong, {} wrong to right, p = {}",
               test["right_to_wrong"], test["wrong_to_right"], f"{test['p']:.4g}")
    )  # fmt: skip
    if result["flips"]:
        st.caption(ui.fmt("{} flipped", counted(len(result["flips"]), "claim")))
        st.dataframe(pd.DataFrame(result["flips"]), hide_index=True, key="rubric_flips")


def runs_spend(store: Store, version: int) -> None:
    runs = judge_runs_spend(store, version)
    if runs:
        st.dataframe(pd.DataFrame(runs), hide_index=True, key="rubric_runs_spend")
    else:
        st.caption(ui.fmt("No judge run of v{} yet.", version))
