"""bench_import_release's app part: the app's RSS before and after a page import in chromium.

Each variant is a fresh `streamlit run app.py` on a fresh store with one lead, started through
`-c` code that first leaves out the parts of issue 36's mechanism the variant names (nothing,
for ours: the app as `streamlit run` starts it).
"""

from __future__ import annotations

import os
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

from annotate.accounts.users import add_user
from annotate.store import open_store
from tests.bench.figures import megabytes, show
from tests.bench.label_pages import CHROMIUM_ARGS, PASSWORD, ROOT, start_streamlit, stop
from tests.browser.conftest import upload_file

CHROMIUM = Path("/usr/bin/chromium")
LEAD = "lena"
WARM_TRACES = 20  # the first import's size (bench_import_release's warm file)
SAMPLE_EVERY = 5.0  # seconds between RSS samples while the page is left open
UPLOAD_LIMIT_MB = "1000"  # 100,000 generated traces are 295 MB; Streamlit's default is 200 MB
VARIANTS = {  # name -> what is left out, and how the figure is named
    "released": "ours",
    "kept": "baseline, upload kept (Store.release_memory alone, as before this work)",
    "held": "baseline, nothing released (as issue 36 found it)",
}
LAUNCHER = """
import os
variant = os.environ["ANNOTATE_BENCH_RELEASE_VARIANT"]
if variant in ("kept", "held"):  # the Import page's box keeps the imported file
    import widgets.uploads
    widgets.uploads.forget_upload = lambda upload: None
if variant == "held":  # and DuckDB's cache and the freed heap stay
    from annotate.store import Store
    Store.release_memory = lambda self: None
from streamlit.web.cli import main
main(prog_name="streamlit")
"""
_METRIC = re.compile(
    r'^cache_memory_bytes\{cache_type="(?P<kind>[^"]+)",cache="[^"]*"\} (?P<n>\d+)'
)


def memory(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon and RssFile of a process, in bytes (Linux)."""
    wanted = ("VmRSS", "RssAnon", "RssFile")
    with open(f"/proc/{pid}/status") as fh:
        fields = (line.split(":", 1) for line in fh)
        return {k: int(v.split()[0]) * 1024 for k, v in fields if k in wanted}


def held_by_streamlit(url: str) -> dict[str, int]:
    """Bytes Streamlit's caches say they hold, by kind (UploadedFileManager: uploads)."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=60) as response:
        text = response.read().decode()
    held: dict[str, int] = {}
    for line in text.splitlines():
        if found := _METRIC.match(line):
            held[found["kind"]] = held.get(found["kind"], 0) + int(found["n"])
    return held


def lead_store(db: Path) -> None:
    store = open_store(db)
    add_user(store, LEAD, "lead", PASSWORD)
    store.close()


def open_import(browser: Any, url: str) -> Any:
    """A signed-in lead on the Import page, its first run drawn."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(300_000)
    page.goto(url)
    page.get_by_label("User name").fill(LEAD)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password", exact=True).press("Enter")
    page.get_by_text(f"Signed in as {LEAD}").wait_for()
    page.locator("[data-testid='stPageLink-NavLink']", has_text="Import").first.click()
    page.locator(".st-key-import_run").wait_for()
    return page


def import_upload(page: Any, path: Path) -> int:
    """Upload `path` in the box, press Import, and wait for the summary; the count imported."""

    upload_file(page, path, timeout=1_800_000)
    page.locator(".st-key-import_run button").click()
    told = re.compile(rf"{re.escape(path.name)} \(\w+\): imported (\d+)")
    summary = page.locator("[data-testid='stAlert']", has_text=told)
    summary.first.wait_for(timeout=3_600_000)
    found = told.search(summary.first.inner_text())
    return int(found.group(1)) if found else 0


def run_variant(browser: Any, variant: str, files: tuple[Path, Path], wait: int) -> dict:
    """Cold: the Import page visited; warm: after the small file's import (the first import's
    code and lasting structures loaded, as the bare process's figure is measured); then the
    big file's import and the samples."""
    warm, path = files
    db = path.parent / f"app-{variant}.duckdb"
    lead_store(db)
    env = {
        "ANNOTATE_BENCH_RELEASE_VARIANT": variant,
        "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": UPLOAD_LIMIT_MB,
    }
    process, url = start_streamlit(ROOT / "app.py", db, launcher=("-c", LAUNCHER), env=env)
    try:
        page = open_import(browser, url)
        time.sleep(3)  # the page's run over, its widgets drawn
        before = memory(process.pid)
        import_upload(page, warm)
        time.sleep(3)
        warmed = memory(process.pid)
        imported = import_upload(page, path)
        samples = [memory(process.pid)]
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            time.sleep(min(SAMPLE_EVERY, max(deadline - time.monotonic(), 0)))
            samples.append(memory(process.pid))
        held = held_by_streamlit(url)
        page.context.close()
    finally:
        stop(process)
    return {
        "before": before,
        "warm": warmed,
        "samples": samples,
        "imported": imported,
        "held": held,
    }


def describe(result: dict) -> str:
    before, warm = result["before"], result["warm"]
    after, later = result["samples"][0], result["samples"][-1]
    parts = ", ".join(
        f"{name} {megabytes(m['VmRSS'])} (anon {megabytes(m['RssAnon'])}, file "
        f"{megabytes(m['RssFile'])})"
        for name, m in (
            ("before", before),
            ("warm", warm),
            ("right after", after),
            ("later", later),
        )
    )
    upload = result["held"].get("UploadedFileManager", 0)
    return (
        f"{parts}: {later['VmRSS'] / before['VmRSS']:.2f}x before, "
        f"{later['VmRSS'] / warm['VmRSS']:.2f}x warm; uploads held {megabytes(upload)}"
    )


def measure_app(path: Path, warm: Path, count: int, wait: int) -> None:
    """Each variant once, ours first; figures printed as they come. `warm` holds the first
    traces of `path` (the big import finds them duplicates)."""
    if os.environ.get("ANNOTATE_BENCH_RELEASE_APP", "1").strip() == "0":
        show("app part left out (ANNOTATE_BENCH_RELEASE_APP=0)")
        return
    if not CHROMIUM.exists():
        show(f"app part skipped: it drives Debian's chromium, and {CHROMIUM} is not installed")
        return
    from playwright.sync_api import sync_playwright

    show(f"app: {count:,} traces uploaded through the Import page, the app's RSS {wait} s after")
    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for variant, name in VARIANTS.items():
            results[variant] = result = run_variant(browser, variant, (warm, path), wait)
            if result["imported"] != count - WARM_TRACES:
                raise RuntimeError(f"{variant}: imported {result['imported']:,} of {count:,}")
            show(f"  {name}: {describe(result)}")
        browser.close()
    series = " ".join(f"{m['VmRSS'] / 1e6:.0f}" for m in results["released"]["samples"])
    show(f"  ours every {SAMPLE_EVERY:.0f} s from the summary on (MB): {series}")
    for start, what in (("before", "the Import page visited"), ("warm", "a 20-trace import")):
        ratios = {v: r["samples"][-1]["VmRSS"] / r[start]["VmRSS"] for v, r in results.items()}
        show(
            f"  app RSS {wait} s after / after {what}: {ratios['released']:.2f}x "
            f"(target <= 1.20x); upload kept {ratios['kept']:.2f}x; "
            f"nothing released {ratios['held']:.2f}x"
        )
