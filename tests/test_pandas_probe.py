"""pyarrow's pandas question answered without importing pandas (annotate.traces.pandas_probe):
a command that builds Arrow tables from Python values never imports pandas, and once pandas
is imported for its own sake pyarrow converts pandas objects as it always did. Each case runs
in a fresh interpreter: the test process has imported pandas long before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa

from annotate.traces import pandas_probe

ROOT = Path(__file__).resolve().parents[1]


def fresh(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_tables_built_without_pandas_then_pandas_converts_as_before():
    found = fresh(
        """
import json, sys
import pyarrow as pa
from annotate.traces import pandas_probe
from annotate.traces.rows import Trace
from annotate.traces.tables import trace_tables
pandas_probe.settle()
tables = trace_tables(1, [])
built = pa.array(["a", None]).null_count
before = "pandas" in sys.modules
import pandas as pd
series = pa.array(pd.Series([1.0, None])).null_count
frame = pa.Table.from_pandas(pd.DataFrame({"x": [1.0, None]})).column("x").null_count
back = pa.table({"x": [1, 2]}).to_pandas()["x"].tolist()
print(json.dumps({"before": before, "built": built, "series": series, "frame": frame,
                  "back": back, "loader": type(pd.__spec__.loader).__name__}))
"""
    )
    assert found["before"] is False  # the arrays were built, pandas was never imported
    assert found["built"] == 1
    # pandas imported afterwards: a Series' NaN is a null again (pyarrow told, not left
    # believing there is no pandas, which reads the NaN as a number)
    assert found["series"] == 1
    assert found["frame"] == 1
    assert found["back"] == [1, 2]


def test_another_thread_importing_pandas_during_the_probe_gets_it_and_pyarrow_knows():
    """The app's sessions run in threads: one page's probe must not refuse pandas to a page
    importing it at that moment, nor leave pyarrow believing there is none."""
    found = fresh(
        """
import json, sys, threading
import pyarrow
from annotate.traces import pandas_probe
real, seen = pyarrow.array, {}
def during_the_probe(values, *args, **kwargs):
    def other():
        try:
            import pandas
            seen["other"] = "imported"
        except ImportError as exc:
            seen["other"] = repr(exc)
    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    return real(values, *args, **kwargs)
pyarrow.array = during_the_probe
pandas_probe.settle()
pyarrow.array = real
import pandas as pd
print(json.dumps({"other": seen["other"], "series": pyarrow.array(pd.Series([1.0, None])).null_count}))
"""
    )
    assert found == {"other": "imported", "series": 1}


def test_without_the_probe_pyarrow_imports_pandas_for_a_list():
    """The cost the probe saves is real in this pyarrow: its first array imports pandas."""
    found = fresh(
        'import json, sys, pyarrow as pa; pa.array(["a"]); '
        'print(json.dumps({"pandas": "pandas" in sys.modules}))'
    )
    assert found["pandas"] is True


def test_a_process_with_pandas_is_left_alone():
    assert "pandas" in sys.modules
    before = list(sys.meta_path)
    pandas_probe.settle()
    assert sys.meta_path == before
    assert pa.array(pd.Series([1.0, None])).null_count == 1


def test_the_import_and_sample_commands_import_no_pandas(tmp_path):
    """`annotate import` and `annotate sample --source` as a user runs them: the command's
    own modules leave pandas out (the active draw's and the reports' modules load it when
    used), and the rows they store are the same."""
    code = f"""
import json, runpy, sys
def run(*argv):
    sys.argv = ["annotate", *argv]
    try:
        runpy.run_module("annotate.cli", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        assert not done.code, done.code
run("import", "data/sample_traces.jsonl", "--db", {str(tmp_path / "a.duckdb")!r})
run("sample", "--name", "s", "--n", "20", "--source", "data/sample_traces.jsonl",
    "--db", {str(tmp_path / "b.duckdb")!r})
print(json.dumps({{"pandas": "pandas" in sys.modules}}))
"""
    assert fresh(code) == {"pandas": False}
    from annotate.store import open_store

    for name, table, least in (("a", "traces", 100), ("b", "sample_units", 20)):
        store = open_store(tmp_path / f"{name}.duckdb")
        try:
            assert store.fetchall(f"SELECT count(*) FROM {table}")[0][0] >= least
        finally:
            store.close()
