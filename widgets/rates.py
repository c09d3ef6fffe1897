"""The Rates page's parts: drift alerts, error types, scores, the label budget, the threshold
setting (leads only) and the downloads (every download prepared is a recorded export)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

import ui
from annotate.errors import AnnotateError, counted, slice_label
from annotate.rates import charts
from annotate.rates.active import describe_savings
from annotate.rates.budget import top_up_from_plan
from annotate.rates.bundle import bundle_bytes
from annotate.rates.exports import export_bytes, record_export
from annotate.rates.gate import save_threshold
from annotate.rates.inputs import RatesInput
from annotate.rates.otel import otel_lines
from annotate.rates.view import budget_view
from annotate.store import Store
from widgets import ahead
from widgets.downloads import download_button, keep_prepared, prepared


def drift_alerts(found: Mapping[str, Any]) -> None:
    alerts = [d for d in found["drift"] if d["alert"]]
    for d in alerts:
        st.warning(
            ui.fmt(
                "Drift in {}: {} -> {} changed by {} (z {}, p {})",
                d["estimator"],
                d["from"],
                d["to"],
                f"{d['change']:+.1%}",
                f"{d['z']:.2f}",
                f"{d['p']:.3f}",
            )  # fmt: skip
        )
    tested = [d for d in found["drift"] if d["p"] is not None]
    if tested and not alerts:
        st.caption("No drift between consecutive windows beyond chance.")
    if len(tested) < len(found["drift"]):
        st.caption(
            ui.fmt(
                "{} of consecutive windows not tested: too few units in a window.",
                counted(len(found["drift"]) - len(tested), "pair"),
            )
        )
    st.caption(ui.fmt("Test: {}", found["test"]))


def error_frame(kinds: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"slice": slice_label(k["slice"]), "error type": k["error_type"],
          "claims": k["claims"], "weighted share": k["share"]} for k in kinds]
    )  # fmt: skip


def score_summary(summary: Mapping[str, Any]) -> None:
    if not summary.get("count"):
        st.info(ui.md(summary.get("reason") or "no scores"))
        return
    st.caption(
        ui.fmt(
            "{} scores · p50 {} · p95 {} · standard deviation {}",
            summary["count"],
            f"{summary['p50']:.3f}",
            f"{summary['p95']:.3f}",
            f"{summary['std']:.3f}",
        )  # fmt: skip
    )
    ui.chart(charts.score_chart, summary, key="rates_scores_chart")


def _top_up(store: Store, sample: str, plan: dict, with_judge: bool, user: Any) -> None:
    try:
        found = top_up_from_plan(store, sample, plan, with_judge, user.name)
        st.session_state["rates_top_up_message"] = (
            f"added {counted(found['added'], 'trace')} to the sample"
        )
    except AnnotateError as exc:
        st.session_state["rates_top_up_message"] = str(exc)


def label_budget(
    store: Store, inputs: RatesInput, by: Sequence[str], judge: str | None, user: Any
) -> None:
    """`judge`: as the page asked `rates_view` for it (None: the default judge), so the plan
    reads the same inputs."""
    width = st.number_input(
        "Target interval width (response level)",
        0.01,
        0.9,
        ahead.BUDGET_WIDTH,
        0.01,
        key="rates_budget_width",
    )
    plan = ui.computed(budget_view, inputs.sample, tuple(by), judge, float(width))
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "stratum": s["stratum"],
                    "N_h": s["population"],
                    "labelled": s["labelled"],
                    "more without the judge": s["without_judge"]["more"],
                    "more with the judge": s["with_judge"]["more"],
                }
                for s in plan["strata"]
            ]
        ),  # fmt: skip
        hide_index=True,
        key="rates_budget_table",
    )
    st.caption(
        ui.fmt(
            "{} more traces to label without the judge, {} with it (a lead can draw them into "
            "the sample here). Method: {}",
            plan["more_without_judge"],
            plan["more_with_judge"],
            plan["method"],
        )  # fmt: skip
    )
    savings = ui.app_text(describe_savings(plan["labels_needed"], plan["width"]))
    st.caption(ui.fmt("{}. Method: {}", savings, plan["labels_needed"]["method"]))
    if user.role != "lead":
        return
    with_judge = st.checkbox("Top up to the plan with the judge", key="rates_top_up_judge")
    st.button(
        "Top up the sample to this plan",
        key="rates_top_up",
        on_click=ui.guard(_top_up),
        args=(store, inputs.sample, plan, with_judge, user),
    )
    if message := st.session_state.pop("rates_top_up_message", None):
        st.info(ui.md(message))


def _save_threshold(store: Store, user: Any) -> None:
    try:
        save_threshold(store, float(st.session_state["rates_threshold"]), user.name)
    except AnnotateError as exc:
        st.session_state["rates_threshold_error"] = str(exc)


def threshold_setting(store: Store, threshold: float, user: Any) -> None:
    if user.role != "lead":
        st.caption(ui.fmt("Alert threshold: {} (a lead's setting).", f"{threshold:.1%}"))
        return
    st.number_input(
        "Alert threshold (share)",
        0.001,
        0.999,
        threshold,
        0.01,
        format="%.3f",
        key="rates_threshold",
    )
    st.button(
        "Save the threshold",
        key="rates_threshold_save",
        on_click=ui.guard(_save_threshold),
        args=(store, user),
    )
    if error := st.session_state.pop("rates_threshold_error", None):
        ui.show_error(AnnotateError(error))


def downloads(
    store: Store,
    inputs: RatesInput,
    rows: Sequence[Mapping[str, Any]],
    by: Sequence[str],
    threshold: float,
    user: Any,
) -> None:
    """Prepare the files once for these settings (recorded as exports), then offer them."""
    settings = (inputs.sample, inputs.judge, list(by), threshold, rows)
    if st.button("Prepare downloads (rates, OTel records, auditor bundle)", key="rates_prepare"):
        files = {f"rates.{fmt}": export_bytes(rows, fmt) for fmt in ("csv", "parquet", "json")}
        files["evaluations.jsonl"] = "".join(
            otel_lines(store, inputs.sample, inputs.judge)
        ).encode()
        files["bundle.zip"] = bundle_bytes(
            store, inputs.sample, by, inputs.judge, threshold, actor=user.name
        )[0]
        for name, data in files.items():
            record_export(store, user.name, name, data, sample=inputs.sample, origin="rates page")
        keep_prepared("rates_files", files, *settings)
    files = prepared("rates_files", *settings)
    if files:
        for column, (name, data) in zip(st.columns(len(files)), files.items(), strict=True):
            download_button(
                ui.fmt("Download {}", name),
                data,
                file_name=name,
                mime="application/octet-stream",
                key=f"rates_download_{name}",
                where=column,
            )
