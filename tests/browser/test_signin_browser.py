"""Sign-in by mechanism, in a real browser against `streamlit run`.

Every URL (the app's pages and the raw names of the pages/ folder), opened by a visitor
on a freshly started server, shows only the sign-in (or first-lead) form and none of the
store's text. A reload and a deep link keep a signed-in reviewer on their page; Log out,
deactivation and a new password end the session; wrong passwords are slowed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Runs, annotate_cli, running_app, wait_for_session

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "reviewer passphrase"
LEAD_PASSWORD = "lead passphrase"
# The app's page addresses, which are also the file names in pages/.
# Every page's address (app.py registers each pages/ file under its stem), the bare root,
# and an unknown one: a new page is covered without editing this list.
PATHS = [
    "/",
    *sorted(f"/{page.stem}" for page in (ROOT / "pages").glob("*.py")),
    "/no_such_page",
]


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample (traces, judge verdicts, the demo sample), no accounts yet."""
    db = tmp_path_factory.mktemp("signin") / "fresh.duckdb"
    annotate_cli("init", db=db)
    return db


@pytest.fixture(scope="module")
def secrets(sample_store: Path) -> list[str]:
    """Strings of the store that no visitor may see: trace ids, texts, the sample's name."""
    rows = [json.loads(line) for line in (ROOT / "data" / "sample_traces.jsonl").open()][:5]
    found = [row["trace_id"] for row in rows] + [row["response"][:40] for row in rows]
    return [*found, "sim-ana", "Browse a trace", "Traces by feature"]


def visible_text(page: Any) -> str:
    return page.locator("body").inner_text()


def check_only_the_form(page: Any, path: str, heading: str, secrets: list[str]) -> None:
    page.goto(path)
    page.get_by_role("heading", name=heading).wait_for()
    page.get_by_label("User name").wait_for()
    page.wait_for_timeout(300)  # anything else the run would draw arrives by now
    text = visible_text(page)
    assert not [s for s in secrets if s in text], (path, text[:500])
    assert page.locator("[data-testid='stPageLink-NavLink']").count() == 0, path
    assert page.locator("[data-testid='stSidebarNavLink']").count() == 0, path
    assert page.locator("[data-testid='stDataFrame']").count() == 0, path


def test_a_visitor_sees_only_the_first_lead_form_on_a_store_without_accounts(
    chromium: Path, browser: Any, sample_store: Path, secrets: list[str]
) -> None:
    with running_app(sample_store) as url:
        page = browser.new_context(base_url=url).new_page()
        # The first request of the fresh server goes to a page file, not to "/".
        for path in ["/sample", *PATHS]:
            check_only_the_form(page, path, "Create the first lead", secrets)


@pytest.fixture(scope="module")
def accounts_store(sample_store: Path) -> Path:
    db = sample_store.with_name("accounts.duckdb")
    db.write_bytes(sample_store.read_bytes())
    annotate_cli("user", "add", "lena", "--role", "lead", db=db, stdin=LEAD_PASSWORD + "\n")
    annotate_cli("user", "add", "rev", "--role", "reviewer", db=db, stdin=PASSWORD + "\n")
    # after rev in the Users page list, whose first account the lead tests below act on
    # named after rev: the lead tests below act on the Users page's first account, rev
    annotate_cli("user", "add", "vera", "--role", "auditor", db=db, stdin=PASSWORD + "\n")
    annotate_cli("assign", "--sample", "demo", "--reviewers", "rev", "--per-trace", "1", db=db)
    return db


@pytest.fixture(scope="module")
def accounts_url(chromium: Path, accounts_store: Path) -> Any:
    """The app with the lead pages' compute-ahead worker on (off in the other tests): the
    auditor's visits below start it from Calibration and Rates, in the real server."""
    with running_app(accounts_store, env={"ANNOTATE_COMPUTE_AHEAD": "1"}) as url:
        yield url
    logs = "".join(p.read_text() for p in accounts_store.parent.glob("streamlit-*.log"))
    assert "computing the lead pages ahead failed" not in logs, logs[-3000:]


def test_a_visitor_sees_only_the_sign_in_form_on_every_url(
    browser: Any, accounts_url: str, secrets: list[str]
) -> None:
    page = browser.new_context(base_url=accounts_url).new_page()
    for path in ["/import_traces", *PATHS]:
        check_only_the_form(page, path, "Sign in", secrets)


def sign_in(page: Any, name: str, password: str) -> None:
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Password", exact=True).press("Enter")


def test_a_deep_link_and_a_reload_keep_the_reviewer_on_their_page(
    browser: Any, accounts_url: str
) -> None:
    context = browser.new_context(base_url=accounts_url)
    page = context.new_page()
    page.goto("/label")
    sign_in(page, "Rev", PASSWORD)  # the account is "rev": a name signs in in any case
    page.get_by_role("heading", name="Label", exact=True).wait_for()
    page.locator(".annotate-claim").wait_for()
    assert page.url.endswith("/label")
    # the app's own sidebar, even on a server where nobody has opened "/" yet: Streamlit ran
    # pages/label.py alone there, with no page list, no "Signed in as" and no Log out
    page.get_by_text("Signed in as rev").wait_for()
    page.get_by_role("button", name="Log out").wait_for()
    wait_for_session(page)
    page.reload()
    page.get_by_role("heading", name="Label", exact=True).wait_for()
    page.get_by_text("Signed in as rev").wait_for()
    other = context.new_page()  # a second tab, by deep link
    other.goto("/label")
    other.locator(".annotate-claim").wait_for()
    cookie = session_cookie(context)
    assert cookie["sameSite"] == "Strict" and PASSWORD not in cookie["value"]
    assert "rev" not in cookie["value"]
    context.close()


LEAD_ONLY = {  # address -> the page's title, which an auditor must never be shown
    "/label": "Label",
    "/import_traces": "Import",
    "/sample": "Sample",
    "/assign": "Assign",
    "/adjudicate": "Adjudicate",
    "/questions": "Questions",
    "/users": "Users",
}


def test_an_auditor_reaches_no_lead_page_by_url_or_by_reload(
    browser: Any, accounts_url: str
) -> None:
    context = browser.new_context(base_url=accounts_url)
    page = context.new_page()
    page.goto("/")
    sign_in(page, "vera", PASSWORD)
    page.get_by_text("Signed in as vera").wait_for()
    wait_for_session(page)
    for path, title in LEAD_ONLY.items():
        for _ in range(2):  # by address, then by reload
            page.goto(path) if _ == 0 else page.reload()
            page.get_by_text("Signed in as vera").wait_for()
            page.wait_for_timeout(300)
            assert page.get_by_role("heading", name=title, exact=True).count() == 0, path
            assert page.locator("[data-testid='stFileUploader']").count() == 0, path
            assert page.locator(".annotate-claim").count() == 0, path
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    assert not [t for t in LEAD_ONLY.values() if t in sidebar.split("\n")], sidebar
    context.close()


def test_an_auditor_sees_calibration_charts_drawn_and_downloads_the_report_with_them(
    browser: Any, accounts_url: str
) -> None:
    """As the least privileged role that reads Calibration: the charts are drawn from their
    shared specs (ui.chart), a revisit draws them again, and the report prepared in the app
    (charts rendered by the helper process) holds every chart as inline SVG."""
    context = browser.new_context(base_url=accounts_url, accept_downloads=True)
    page = context.new_page()
    page.goto("/calibration")
    sign_in(page, "vera", PASSWORD)
    for _ in range(2):  # the first visit, then a new session of the same page
        page.get_by_role("heading", name="Calibration of the judge", exact=True).wait_for()
        cells = page.locator("[data-testid='stVegaLiteChart']").first.locator(
            "svg .mark-rect.role-mark path"
        )
        cells.first.wait_for()
        assert cells.count() == 4  # the confusion matrix's four cells
        page.reload()
    page.get_by_role("tab", name="Settings and report").click()  # a tab runs when opened
    page.get_by_role("button", name="Prepare the report (HTML, Markdown, JSON)").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download report.html").click()
    html = Path(download.value.path()).read_text()
    figures = re.findall(r'<figure class="chart"[^>]*><svg', html)
    assert len(figures) == html.count("<figure") >= 2 and "<script" not in html
    context.close()


def test_an_auditor_reads_rates_on_a_visit_after_a_reload_and_at_another_level(
    browser: Any, accounts_url: str
) -> None:
    """As the least privileged role that reads Rates: the page draws its table and, in its tab,
    the trend from the numbers it keeps per setting (annotate.rates.view), on a revisit too,
    and another setting (the claim level) draws its own; no lead control is shown in any
    tab."""
    from tests.browser.test_home_browser import choose

    context = browser.new_context(base_url=accounts_url)
    page = context.new_page()
    page.goto("/rates")
    sign_in(page, "vera", PASSWORD)
    for _ in range(2):  # the first visit, then a new session of the same page
        page.get_by_role("heading", name="Hallucination rates", exact=True).wait_for()
        page.get_by_text("response rate · threshold", exact=False).wait_for()
        page.locator("[data-testid='stDataFrame']").first.wait_for()
        page.get_by_role("tab", name="Trend").click()
        page.locator(".st-key-rates_tab_1 [data-testid='stVegaLiteChart']").first.wait_for()
        page.reload()
    page.get_by_role("heading", name="Hallucination rates", exact=True).wait_for()
    choose(page, "Level", "claim")
    page.get_by_text("claim rate · threshold", exact=False).wait_for()
    page.get_by_role("tab", name="Threshold and exports").click()
    page.get_by_role("button", name="Prepare downloads", exact=False).wait_for()
    assert page.get_by_role("button", name="Save the threshold").count() == 0
    page.get_by_role("tab", name="Label budget").click()
    page.get_by_text("more traces to label without the judge", exact=False).wait_for()
    assert page.get_by_role("button", name="Top up the sample to this plan").count() == 0
    context.close()


def session_cookie(context: Any) -> dict[str, Any]:
    """The session cookie, once the page's script has set it (right after sign-in)."""
    for _ in range(100):
        found = [c for c in context.cookies() if c["name"] == "annotate_session"]
        if found:
            return found[0]
        context.pages[0].wait_for_timeout(100)
    raise AssertionError("no session cookie was set")


def reuse_cookie(browser: Any, url: str, cookie: dict[str, Any]) -> Any:
    """A new browser holding only a copied session cookie: does the server still take it?"""
    context = browser.new_context(base_url=url)
    context.add_cookies([{k: cookie[k] for k in ("name", "value", "domain", "path")}])
    page = context.new_page()
    page.goto("/label")
    return page


def test_log_out_ends_the_session_token(browser: Any, accounts_url: str) -> None:
    context = browser.new_context(base_url=accounts_url)
    page = context.new_page()
    page.goto("/")
    sign_in(page, "rev", PASSWORD)
    page.get_by_text("Signed in as rev").wait_for()
    cookie = session_cookie(context)
    copy = reuse_cookie(browser, accounts_url, cookie)
    copy.locator(".annotate-claim").wait_for()  # the token works before Log out
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    again = reuse_cookie(browser, accounts_url, cookie)
    again.get_by_role("heading", name="Sign in").wait_for()
    assert again.locator(".annotate-claim").count() == 0


def lead_page(browser: Any, url: str) -> Any:
    page = browser.new_context(base_url=url).new_page()
    page.goto("/users")
    sign_in(page, "lena", LEAD_PASSWORD)
    page.get_by_role("heading", name="Users").wait_for()
    wait_for_session(page)
    return page


def label_events(lead: Any) -> str:
    lead.goto("/")
    metric = lead.get_by_test_id("stMetric").filter(has_text="Label events")
    return str(metric.get_by_test_id("stMetricValue").inner_text())


def reviewer_on_label(browser: Any, url: str) -> Any:
    page = browser.new_context(base_url=url).new_page()
    page.goto("/label")
    sign_in(page, "rev", PASSWORD)
    page.locator(".annotate-claim").wait_for()
    return page


def press_verdict(page: Any) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(500)
    page.keyboard.press("1")


def test_deactivation_ends_an_open_session_and_it_stores_nothing_more(
    browser: Any, accounts_url: str
) -> None:
    reviewer = reviewer_on_label(browser, accounts_url)
    press_verdict(reviewer)
    reviewer.get_by_text("1 / ").wait_for()
    lead = lead_page(browser, accounts_url)
    before = label_events(lead)
    runs = Runs.opening(lead, "/users")
    deactivate = lead.get_by_role("button", name="Deactivate (ends their sessions)")
    runs.after(deactivate.click)  # the click's run has stored it
    for _ in range(3):  # the reviewer's open tab tries three more verdicts
        if reviewer.locator(".annotate-claim").count():
            press_verdict(reviewer)
    reviewer.get_by_role("heading", name="Sign in").wait_for()
    assert label_events(lead) == before
    Runs.opening(lead, "/users").after(lead.get_by_role("button", name="Reactivate").click)


def test_a_new_password_ends_the_open_session(browser: Any, accounts_url: str) -> None:
    reviewer = reviewer_on_label(browser, accounts_url)
    lead = lead_page(browser, accounts_url)
    form = lead.get_by_test_id("stForm").filter(has_text="New password")
    # rev is the first account offered (others before oneself)
    form.get_by_label("New password (8+ characters)").fill("new reviewer passphrase")
    form.get_by_role("button", name="Set the password").click()
    lead.get_by_text("rev has a new password").wait_for()
    press_verdict(reviewer)
    reviewer.get_by_role("heading", name="Sign in").wait_for()
    sign_in(reviewer, "rev", "new reviewer passphrase")
    reviewer.locator(".annotate-claim").wait_for()


def test_wrong_passwords_are_slowed_and_the_wait_is_said(browser: Any, accounts_url: str) -> None:
    """Five wrong passwords slow the browser they came from (the page says how long), and do
    not keep the lead out of another browser (they used to lock the account: anybody could
    lock out the only lead)."""
    page = browser.new_context(base_url=accounts_url).new_page()
    runs = Runs.opening(page, "/")
    for _ in range(5):
        runs.after(lambda: sign_in(page, "lena", "not the password"))  # stored before the next
        page.get_by_text("wrong user name or password").wait_for()
    runs.after(lambda: sign_in(page, "lena", LEAD_PASSWORD))  # even the right one waits here
    waits = re.compile(r"too many wrong passwords from this browser for 'lena': wait \d+ s")
    page.get_by_text(waits).wait_for()
    assert page.get_by_text("Signed in as lena").count() == 0
    other = browser.new_context(base_url=accounts_url).new_page()
    other.goto("/")
    sign_in(other, "lena", LEAD_PASSWORD)
    other.get_by_text("Signed in as lena").wait_for()
    for opened in (page, other):
        opened.context.close()
