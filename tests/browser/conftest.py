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
