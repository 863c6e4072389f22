"""Fixtures of the browser tests: one chromium and one page (with its offline guard) shared by the module, on the
real app server of the test process (tests/conftest.py's app_url), so the tests run in file order like one
visitor's session. Measurements are collected in MEASURED and printed at the end of the run."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from playwright import sync_api

from tests.browser import tour  # noqa: E402

MEASURED: dict[str, str] = {}


@dataclass
class Lab:
    url: str
    page: object
    guard: tour.OfflineGuard


@pytest.fixture(scope="module")
def browser():
    """A chromium per module, not per test process: Playwright's sync API keeps an asyncio loop marked running in
    this thread while it is open, and the later tests of the process that call asyncio.run failed with "cannot be
    called from a running event loop" (test_backoff, test_config_roots: fresh-clone run, 2026-11-28)."""
    assert Path(tour.CHROMIUM).exists(), f"no chromium at {tour.CHROMIUM}: apt-get install -y chromium"
    with sync_api.sync_playwright() as p:
        browser = tour.launch_browser(p)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def lab(browser, app_url):
    """The app open in one page; requests outside 127.0.0.1 are aborted and recorded in `lab.guard`."""
    page, guard = tour.new_page(browser)
    tour.open_app(page, app_url)
    yield Lab(app_url, page, guard)
    page.close()


@pytest.fixture(scope="module")
def open_at(browser, app_url):
    """open_at(width): the app open in a page of that size (one page per size, shared by the tests)."""
    opened = {}

    def open_page(width: int):
        if width not in opened:
            page, _ = tour.new_page(browser)
            page.set_viewport_size(tour.SIZES[width])
            tour.open_app(page, app_url)
            opened[width] = page
        return opened[width]
    yield open_page
    for page in opened.values():
        page.close()


def pytest_terminal_summary(terminalreporter):
    if MEASURED:
        terminalreporter.section("browser measurements")
        for name, value in MEASURED.items():
            terminalreporter.write_line(f"{name}: {value}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.failed_call = report.failed


@pytest.fixture(autouse=True)
def screenshot_on_failure(request):
    """A failed browser test leaves a screenshot of each page its module's browser holds (the screen as the visitor
    saw it, and the open dropdown or dialog that may explain a wait), named in the report's output, and says what the
    app was doing (tests.app_server.server_state: its lines, and the threads in its code): a wait that timed out on
    CI is then read from the report, not guessed."""
    yield
    if not getattr(request.node, "failed_call", False) or "browser" not in request.fixturenames:
        return
    browser = request.getfixturevalue("browser")
    for i, page in enumerate(p for context in browser.contexts for p in context.pages):
        path = tour.SHOTS / f"failed-{request.node.name}-{i}.png".replace("/", "_")
        try:
            page.screenshot(path=str(path), timeout=10_000)
            print(f"screenshot of page {i} at the failure: {path}")
        except Exception as error:  # a page that cannot be drawn any more: say so, and where its script is busy
            print(f"no screenshot of page {i}: {error}")
            print(f"page {i}'s script, paused: {_paused_stack(page)}")
    from tests.app_server import server_state

    print(f"the app's lines and the threads in its code at the failure:\n{server_state() or 'nothing running'}")


def _paused_stack(page, seconds: float = 5.0) -> str:
    """Where a page's script is when it is paused through the devtools protocol (its top frames, the async chain
    that led there, and the id of the figure a plotly frame holds): a page too busy to draw a screenshot is most often
    running one script in a loop."""
    import time

    cdp = page.context.new_cdp_session(page)
    paused = []
    cdp.on("Debugger.paused", lambda event: paused.append(event))

    def where(f) -> str:
        return (f"{f['functionName'] or '(anonymous)'} at {f['url'].rsplit('/', 1)[-1]}:"
                f"{(f.get('location') or f)['lineNumber'] + 1}")
    try:
        cdp.send("Debugger.enable")
        cdp.send("Debugger.setAsyncCallStackDepth", {"maxDepth": 16})
        cdp.send("Debugger.pause")
        end = time.monotonic() + seconds
        while not paused and time.monotonic() < end:
            page.wait_for_timeout(100)
        if not paused:
            return "not paused (the page runs no script: layout or painting)"
        event = paused[0]
        said = ["; ".join(where(f) for f in event["callFrames"][:40])]
        chain = event.get("asyncStackTrace")
        while chain:
            said.append(f"<- {chain.get('description', '')}: " + "; ".join(where(f) for f in chain["callFrames"][:10]))
            chain = chain.get("parent")
        figures = set()
        for frame in event["callFrames"]:
            found = cdp.send("Debugger.evaluateOnCallFrame", {
                "callFrameId": frame["callFrameId"], "returnByValue": True, "silent": True,
                "expression": "(() => { try { const e = (typeof gd !== 'undefined' && gd) || (typeof t !== 'undefined' "
                              "&& t && t.closest && t); return e && e.closest ? (e.closest('[id]') || {}).id : null; }"
                              " catch (x) { return null } })()"})
            value = (found.get("result") or {}).get("value")
            if value:
                figures.add(value)
        cdp.send("Debugger.resume")
        return " ".join(said) + f" | figure(s) in its frames: {sorted(figures) or 'none found'}"
    except Exception as error:
        return f"not paused: {error}"
