"""Untrusted text is text, by mechanism: no page builds Markdown from data by hand.

Every Streamlit call whose text is rendered as Markdown (messages, captions, headings,
widget labels, progress text) gets either a literal string or `ui.fmt(...)` / `ui.md(...)`,
which escape every value. An f-string, `%`, `+` or `.format` there would let a trace id,
a feature value or a file name render as Markdown, so this test fails on it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([ROOT / "app.py", ROOT / "ui.py", *(ROOT / "pages").glob("*.py")])
MARKDOWN_CALLS = {
    "markdown", "caption", "write", "title", "header", "subheader", "success", "info",
    "warning", "error", "toast", "button", "form_submit_button", "expander", "metric",
    "checkbox", "toggle", "radio", "selectbox", "multiselect", "text_input", "text_area",
    "number_input", "slider", "tabs", "download_button", "page_link", "progress",
    "file_uploader", "popover", "status", "spinner",
}  # fmt: skip


def _is_built_by_hand(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return not (isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" or node.func.attr == "join"
    if isinstance(node, ast.IfExp):
        return _is_built_by_hand(node.body) or _is_built_by_hand(node.orelse)
    return False


def _markdown_texts(call: ast.Call) -> list[ast.AST]:
    texts = list(call.args[:1])
    texts += [k.value for k in call.keywords if k.arg in ("body", "label", "text", "help")]
    return texts


def hand_built_markdown(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in MARKDOWN_CALLS:
            continue
        if any(_is_built_by_hand(text) for text in _markdown_texts(node)):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} st.{node.func.attr}(...)")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_builds_markdown_from_data_by_hand(path):
    assert hand_built_markdown(path) == [], "use ui.fmt(template, values) or ui.md(value)"


def test_the_check_catches_data_put_into_markdown_by_hand(tmp_path, monkeypatch):
    page = tmp_path / "page.py"
    page.write_text(
        "import streamlit as st\n"
        'st.caption(f"Trace {trace_id}")\n'
        'st.success("Imported " + name)\n'
        'st.button(label="Draw {}".format(name))\n'
        'st.caption(ui.fmt("Trace {}", trace_id))\n'
        'st.caption("a literal")\n'
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert hand_built_markdown(page) == [
        "page.py:2 st.caption(...)",
        "page.py:3 st.success(...)",
        "page.py:4 st.button(...)",
    ]
