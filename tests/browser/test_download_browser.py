"""Downloads in a real browser: the bytes reach only the signed-in session that asked for them.

Streamlit's st.download_button served a file at /media/<hash of its content>, answering 200
with no cookie, after Log out and after the browser closed. downloads.download_button hands the bytes
over the session's websocket and the page saves them from a blob: URL: the URL of the
download is refused with no cookie, with a reviewer's cookie, and after Log out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_signin_browser import (  # noqa: F401 - the module's fixtures
    LEAD_PASSWORD,
    PASSWORD,
    accounts_store,
    accounts_url,
    sample_store,
    sign_in,
)

pytestmark = pytest.mark.browser

REFUSED = "refused"


def fetched(page: Any, url: str) -> str:
    """What `url` gives `page`'s browser context: the body, or REFUSED (any status but 200)."""
    if url.startswith("http"):
        answer = page.context.request.get(url)
        return answer.text() if answer.status == 200 else REFUSED
    return page.evaluate(
        "async (url) => { try { const r = await fetch(url); return r.ok ? await r.text() : "
        f"'{REFUSED}'; }} catch (e) {{ return '{REFUSED}'; }} }}",
        url,
    )


def signed_in(browser: Any, url: str, name: str, password: str, path: str) -> Any:
    page = browser.new_context(base_url=url, accept_downloads=True).new_page()
    page.goto(path)
    sign_in(page, name, password)
    page.get_by_text(f"Signed in as {name}").wait_for()
    return page


def test_a_download_is_refused_without_the_session_that_asked_for_it(
    browser: Any,
    accounts_url: str,  # noqa: F811 - the fixture imported above
) -> None:
    lead = signed_in(browser, accounts_url, "lena", LEAD_PASSWORD, "/rubric")
    served: list[str] = []
    lead.on("response", lambda r: served.append(r.url) if "/media/" in r.url else None)
    with lead.expect_download() as download:
        lead.get_by_role("button", name="Download YAML").click()
    text = Path(download.value.path()).read_text()
    assert "supported" in text and download.value.suggested_filename.endswith(".yaml")
    url = download.value.url
    assert served == [], "no server URL holds the file"

    visitor = browser.new_context(base_url=accounts_url).new_page()
    visitor.goto("/")
    assert fetched(visitor, url) == REFUSED
    reviewer = signed_in(browser, accounts_url, "rev", PASSWORD, "/")
    assert fetched(reviewer, url) == REFUSED
    lead.get_by_role("button", name="Log out").click()
    lead.get_by_role("heading", name="Sign in").wait_for()
    assert fetched(lead, url) == REFUSED
    for page in (lead, visitor, reviewer):
        page.context.close()
