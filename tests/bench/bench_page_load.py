"""Page loads for a lead on a large store: Home, Agreement, Calibration and Rates, first visit
and revisit, the app's peak RSS after the first three and after Rates; and `annotate report`.

The store is built by a real import of generated traces (judge verdicts on most), a sample of
2,500 traces with claims split by sentence, and three reviewers' labels on every claim of it
(about 10,000 labelled claims). The pages run under Streamlit's AppTest in a child process with
a fresh interpreter, so its peak RSS is the app's alone. First visit: an empty cache in a new
process; revisit: a new session of the same process. Baseline, same child: a bare page
(a title and a ten-row table) visited the same way.

Sized by ANNOTATE_BENCH_LARGE (default 1,000,000 traces). Building the store takes minutes:
with ANNOTATE_BENCH_KEEP_STORE=1 it is kept in the temporary directory ($TMPDIR) and used again
by later runs of the same size and schema (ANNOTATE_BENCH_REBUILD=1 builds it afresh). Without
it every run builds its own store, as the smoke test needs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from annotate.accounts.users import add_user
from annotate.claims.extraction import create_claims
from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from annotate.store.schema import MIGRATIONS
from tests.bench.figures import OWN_PEAK, bench_size, child_result, megabytes, show
from tests.bench.synthetic import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = 2500
REVIEWERS = (("rev-a", 3), ("rev-b", 6), ("rev-c", 10))  # name, error in percent
PAGES = ("home", "agreement", "calibration", "rates")
BARE = """
import streamlit as st
st.title("bare")
st.dataframe([{"n": i, "square": i * i} for i in range(10)])
"""

# Runs in the child: every visit is a new AppTest session of one process.
CHILD = (
    OWN_PEAK
    + """
import json, sys, time
from pathlib import Path
from streamlit.testing.v1 import AppTest
from annotate.accounts.users import start_session
from annotate.store import open_store

root, bare, db = sys.argv[1], sys.argv[2], sys.argv[3]
store = open_store(db)
token = start_session(store, "lead")
store.close()


def visit(page):
    started = time.perf_counter()
    if page is None:
        app = AppTest.from_file(bare, default_timeout=600)
        app.run()
    else:
        app = AppTest.from_file(root + "/app.py", default_timeout=600)
        app.session_state["auth_token"] = token
        app.run()
        if page != "home":
            app.switch_page("pages/" + page + ".py").run()
    assert not app.exception, app.exception
    # a page that could not compute shows an error instead of its tables: not a page load
    assert page is None or len(app.dataframe), (page, [e.value for e in app.error])
    return time.perf_counter() - started


found = {"bare": [visit(None), visit(None)]}
for page in sys.argv[4:]:
    found[page] = [visit(page), visit(page)]
    found["peak_after_" + page] = own_peak()
found["peak_rss"] = own_peak()
print(json.dumps(found))
"""
)


# `annotate report` without --sample, the whole command in a fresh interpreter (its chart
# helper is a process of its own); baseline: an interpreter that opens the same store with
# DuckDB and counts the labelled claims, the least any command does.
REPORT = (
    OWN_PEAK
    + """
import json, sys
from annotate.cli.main import main
code = main(["report", "--judge", sys.argv[2], "--out", sys.argv[3], "--db", sys.argv[1]])
print(json.dumps({"code": code, "peak_rss": own_peak()}))
"""
)
OPEN_ONLY = (
    OWN_PEAK
    + """
import json, sys
import duckdb
conn = duckdb.connect(sys.argv[1])
conn.execute("SELECT count(DISTINCT (trace_id, claim_index)) FROM label_events").fetchall()
print(json.dumps({"code": 0, "peak_rss": own_peak()}))
"""
)


def timed_child(code: str, *args: str) -> tuple[float, int]:
    """Seconds from start to exit of a fresh interpreter running `code`, and its peak RSS."""
    started = time.perf_counter()
    found = child_result(code, *args, what="command")
    if found["code"] != 0:
        raise RuntimeError(f"the command exited with {found['code']}")
    return time.perf_counter() - started, found["peak_rss"]


def report_command(db: Path, out: Path, runs: int = 3) -> None:
    judge = "groundedness-v3"
    for run in range(1, runs + 1):
        base, base_peak = timed_child(OPEN_ONLY, str(db))
        took, peak = timed_child(REPORT, str(db), judge, str(out))
        show(
            f"annotate report without --sample, run {run}: {took:.2f} s for the whole command "
            f"(target < 2 s), peak RSS {megabytes(peak)} (target < 600 MB); baseline, an "
            f"interpreter opening the store and counting its labelled claims: {base:.2f} s, "
            f"{megabytes(base_peak)} (ratio {took / base:.1f}x)"
        )


def fill_store(db: Path, count: int) -> None:
    store = open_store(db)
    source = db.with_suffix(".jsonl")
    write_jsonl(source, count)
    report = import_traces(store, source, fmt="jsonl", actor="bench")
    source.unlink()
    if not report.is_clean:
        raise RuntimeError(f"the generated file did not import cleanly: {report.counts()}")
    draw_sample(store, SampleSpec(name="bench", n=SAMPLE, by=("feature",), seed=1))
    create_claims(store, "bench", extractor="sentences", actor="bench")
    for name, error in REVIEWERS:
        add_user(store, name, "reviewer", "bench passphrase")
        store.execute(
            "INSERT INTO label_events (trace_id, claim_index, reviewer, label, rubric_version, "
            "created_at, origin) SELECT c.trace_id, c.claim_index, ?, "
            "CASE WHEN (hash(c.trace_id || ? || c.claim_index::VARCHAR) % 100 < ?) "
            "  <> (hash(c.trace_id || c.claim_index::VARCHAR) % 100 < 25) "
            "THEN 'contradicted' ELSE 'supported' END, 1, "
            "TIMESTAMP '2026-02-01' + to_seconds(row_number() OVER () * 30), 'app' "
            "FROM claims c JOIN sample_units s ON s.trace_id = c.trace_id AND s.sample = 'bench'",
            [name, name, error],
        )
    add_user(store, "lead", "lead", "bench passphrase")
    store.close()


def cached_store(db: Path, count: int) -> None:
    """The store for `count` traces at `db`: built here, or copied from a kept one."""
    if not os.environ.get("ANNOTATE_BENCH_KEEP_STORE"):
        started = time.perf_counter()
        fill_store(db, count)
        show(f"(built in {time.perf_counter() - started:.0f} s)")
        return
    schema = hashlib.sha256(repr(MIGRATIONS).encode()).hexdigest()[:12]
    kept = Path(tempfile.gettempdir()) / f"annotate-bench-pages-{count}-{schema}.duckdb"
    if os.environ.get("ANNOTATE_BENCH_REBUILD") or not kept.exists():
        started = time.perf_counter()
        building = db.with_name("building.duckdb")  # in this run's own directory
        fill_store(building, count)
        shutil.move(building, kept)
        show(f"(built in {time.perf_counter() - started:.0f} s; kept as {kept})")
    else:
        show(f"(store kept from an earlier run: {kept})")
    shutil.copyfile(kept, db)
    store = open_store(db)
    labelled = store.scalar("SELECT count(DISTINCT (trace_id, claim_index)) FROM label_events")
    store.close()
    show(f"store: {count:,} imported traces, {labelled:,} claims labelled by 3 reviewers")


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_LARGE", 1_000_000)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "pages.duckdb"
        cached_store(db, count)
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE)
        found = child_result(
            CHILD, str(ROOT), str(bare), str(db), *PAGES,
            what="page run", env={**os.environ, "ANNOTATE_DB": str(db)},
        )  # fmt: skip
        report_command(db, Path(tmp) / "report")
    first, again = found["bare"]
    show(f"baseline, a bare page: first visit {first:.2f} s, revisit {again:.3f} s")
    for page in PAGES:
        first, again = found[page]
        show(
            f"{page} for a lead, {count:,} traces: first visit {first:.2f} s (target < 2 s), "
            f"revisit {again:.3f} s (target < 0.3 s); {again / found['bare'][1]:.1f}x the bare "
            f"revisit"
        )
    show(
        f"peak RSS of the app process after Home, Agreement and Calibration: "
        f"{megabytes(found['peak_after_calibration'])} (target < 600 MB); after Rates too "
        f"(beyond #15's table; its first visit reads the whole frame and imports ppi-python): "
        f"{megabytes(found['peak_rss'])}"
    )
