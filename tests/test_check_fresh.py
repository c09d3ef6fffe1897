"""The library call a production app makes: a fresh interpreter that imports only
annotate.check runs a check through the real SDK against the local fake, and has loaded no
store, no DuckDB, no pandas and no Streamlit (harlequin's test, for the runtime check)."""

# ruff: noqa: F811 - the fake_anthropic fixture is imported by name
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT
from fake_anthropic import fake_anthropic  # noqa: F401 - the fixture
from judge_fakes import answer
from rubric_data import trace_rows
from test_check import export_path  # noqa: F401 - the module's calibrated export, a fixture

APP = """
import json, sys
from annotate.check import GroundingCheck

row = json.loads(sys.argv[2])
check = GroundingCheck.from_export(sys.argv[1], model="claude-haiku-4-5", timeout=20)
result = check.check(row["response"], row["context"], row["request"])
loaded = [m for m in ("annotate.store", "duckdb", "pandas", "numpy", "streamlit") if m in sys.modules]
print(json.dumps({"result": result.as_json(), "loaded": loaded}))
"""


def test_a_fresh_interpreter_importing_only_annotate_check_runs_the_check(
    export_path, fake_anthropic
):
    fake_anthropic.responder = answer
    row = trace_rows(1)[0]
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_anthropic.url}
    done = subprocess.run(
        [sys.executable, "-c", APP, str(export_path), json.dumps(row)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["loaded"] == []
    assert shown["result"]["grounded_answer"] is False
    assert [c["quote"] for c in shown["result"]["unsupported_claims"]] == ["The amount due is $47."]
    assert len(fake_anthropic.message_requests()) == 2  # one call per claim, as the rubric says
