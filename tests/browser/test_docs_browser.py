"""The documentation site, built as `make docs` builds it (strict), opened in chromium: every page
loads, the CLI reference is there, search works, and no request leaves the site (no web fonts,
no CDN script, no image from elsewhere)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.docs_site import build_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built in strict mode into a temporary folder; a warning fails the build."""
    out = tmp_path_factory.mktemp("site")
    log = build_site(out)
    assert "WARNING" not in log, log[-3000:]
    return out


@pytest.fixture(scope="module")
def site_url(site: Path) -> Iterator[str]:
    """The built site served on a free port of 127.0.0.1 (no log lines)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_site_loads_nothing_from_outside_it(browser: Any, site: Path, site_url: str) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    pages = sorted(path.relative_to(site).as_posix() for path in site.glob("*.html"))
    assert {"index.html", "cli.html", "getting-started.html", "statistics.html"} <= set(pages)
    for name in pages:
        page.goto(f"{site_url}/{name}", wait_until="networkidle")
    page.goto(f"{site_url}/cli.html", wait_until="networkidle")
    assert page.locator("#annotate-rubric-calibrate").count() == 1  # generated at build time
    page.keyboard.press("/")  # Material's search: its index and worker come from the site too
    page.locator("input.md-search__input").fill("Krippendorff")
    page.locator(".md-search-result__item").first.wait_for(timeout=30_000)
    page.wait_for_load_state("networkidle")
    context.close()
    outside = [r for r in requests if urlparse(r).scheme not in ("data", "blob")]
    outside = [r for r in outside if not r.startswith(site_url + "/")]
    assert outside == [], outside
    assert any(r.endswith("/getting-started.html") for r in requests)
    assert any("/img/" in r and r.endswith(".png") for r in requests)  # the screenshots load
