"""`make docs` builds with no warning (strict: a broken link, a missing anchor or a page left out
of the nav fails), every nav page is there, and the built HTML loads no font or script from
outside the site (tests/browser/test_docs_browser.py checks the requests in a browser)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs_site import ROOT, build_site

EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*(?:src|href)=["'](?:https?:)?//""", re.I
)


def test_the_site_builds_strict_with_no_warning_and_no_external_resource(tmp_path: Path) -> None:
    log = build_site(tmp_path)
    assert "WARNING" not in log, log[-3000:]
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")}
    built = {p.stem for p in tmp_path.glob("*.html")}
    assert pages <= built, pages - built
    for html in tmp_path.glob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert not EXTERNAL.findall(text), (html.name, EXTERNAL.findall(text))
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html.name


def test_every_image_of_the_docs_is_saved_by_a_browser_test_and_shown() -> None:
    """No hand-made screenshot: each file of docs/img is one a browser test saves (with
    ANNOTATE_DOCS_SCREENSHOTS=1), each is shown by a page, and each shown one exists."""
    from tests.browser.test_docs_browser import BUNDLED_PAGES
    from tests.browser.test_lead_path_browser import DOCS_SHOTS

    saved = set(DOCS_SHOTS) | {shot for _, _, shot in BUNDLED_PAGES}
    files = {p.stem for p in (ROOT / "docs" / "img").glob("*.png")}
    pages = [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    shown = {m for p in pages for m in re.findall(r"img/([\w-]+)\.png", p.read_text("utf-8"))}
    assert files == saved, files ^ saved
    assert shown == files, shown ^ files
