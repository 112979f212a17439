"""JupyterLab in headless Chromium for the browser tests: the fixtures and the page helpers.

JupyterLab (started by `lab_server.py`, which the benchmarks share) runs on 127.0.0.1 with a token
and a temporary root; its kernels talk to a loopback ScriptedServer whose replies the tests queue.
The browser is Debian's Chromium (never one a test tool downloads). Every request the page makes to a host other than loopback is refused and
recorded: a test fails on any (`page` fixture), since model text must never make the page load
something from elsewhere. Screenshots go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.testing import ScriptedServer, fail
from tests.lab_server import (
    CHROMIUM,
    EXPECT,
    FLAGS,
    LONG,
    OFF_LOOPBACK,
    SHORT,
    TOKEN,
    run_first_cell,
    running_lab,
    show_notebook,
    write_notebook,
)

__all__ = ["LONG", "TOKEN", "ask", "open_notebook", "run_next", "shot"]

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


class Replies:
    """What the scripted model says next; tests queue replies as their story goes."""

    def __init__(self) -> None:
        self.queue: deque[Any] = deque()

    def __call__(self, request: Any) -> Any:
        """The next reply; a callable one is made from the request (it reads tool results)."""
        if not self.queue:
            return fail(500, "unscripted request")
        step = self.queue.popleft()
        return step(request) if callable(step) else step


@pytest.fixture(scope="session")
def shared_replies() -> Replies:
    return Replies()


@pytest.fixture
def replies(shared_replies: Replies) -> Iterator[Replies]:
    """The module's scripted replies, empty at the start of each test."""
    shared_replies.queue.clear()
    yield shared_replies
    shared_replies.queue.clear()


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, shared_replies: Replies
) -> Iterator[dict[str, Any]]:
    """A JupyterLab server whose kernels use the scripted model; yields its URL and root. One per
    module: a lab shared across modules carried state from one to the next that a reload showed
    (sessions, kernels, the root and the workspace reset between them were not enough)."""
    yield from scripted_lab(tmp_path_factory.mktemp("lab"), shared_replies)


def scripted_lab(
    home: Path, replies: Replies, page_config: dict[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    """JupyterLab in `home` whose kernels use the scripted model, with this page config (say,
    `{"disabledExtensions": {...}}`); yields its URL and root."""
    if page_config is not None:
        labconfig = home / "config" / "labconfig"
        labconfig.mkdir(parents=True)
        (labconfig / "page_config.json").write_text(json.dumps(page_config))
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(
                f"{CHROMIUM} is missing: CI must run the browser tests (.ci/run installs it)"
            )
        pytest.skip(f"needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    server = ScriptedServer(responder=replies).start()
    env = {
        "COPILOT_NB_MODEL": "openai:scripted",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "k",
    }
    try:
        with running_lab(home, env=env) as lab:
            yield lab
    finally:
        server.stop()


@pytest.fixture
def outside() -> list[str]:
    """URLs the page asked for on a host other than loopback (each was refused)."""
    return []


@pytest.fixture
def known_page_errors() -> list[re.Pattern[str]]:
    """Uncaught page errors a test knows to come from the application itself, not from us."""
    return []


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium for a module's tests, which saves starting the browser for every test."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=FLAGS
        )
        try:
            yield browser
        finally:
            browser.close()


class Refusals:
    """Where a module's browser context records the URLs it refused: the running test's list."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def refuse(self, route: Any) -> None:
        self.urls.append(route.request.url)
        route.abort("blockedbyclient")


@pytest.fixture(scope="module")
def browser_context(chromium: Any) -> Iterator[tuple[Any, Refusals]]:
    """One browser context for a module's tests, each in a tab of its own: JupyterLab's scripts
    come from its HTTP cache after the first test (about 10 MB that every test loaded and
    compiled again). Its lab is the module's too, so nothing is shared that was not already."""
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    refusals = Refusals()
    context.route(OFF_LOOPBACK, refusals.refuse)
    try:
        yield context, refusals
    finally:
        context.close()


@pytest.fixture
def page(
    lab: dict[str, Any],
    browser_context: tuple[Any, Refusals],
    outside: list[str],
    known_page_errors: list[Any],
) -> Iterator[Any]:
    """A Chromium tab; fails the test on an uncaught page error or any request off loopback."""
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    errors: list[str] = []
    context, refusals = browser_context
    refusals.urls = outside
    tab = context.new_page()
    try:
        tab.on("pageerror", lambda exc: errors.append(_first_lines(exc)))
        tab.set_default_timeout(SHORT)
        expect.set_options(timeout=EXPECT)
        yield tab
        errors = [e for e in errors if not any(k.search(e) for k in known_page_errors)]
        assert not errors, f"uncaught errors in the page: {errors}"
        assert not outside, f"the page asked for URLs off loopback: {outside}"
    finally:
        tab.close()


def _first_lines(exc: Any) -> str:
    """An uncaught page error: its message and where it was thrown."""
    stack = getattr(exc, "stack", None) or ""
    return "\n".join([str(exc), *stack.splitlines()[1:4]])


def open_notebook(page: Any, lab: dict[str, Any], name: str, *sources: str) -> None:
    """Write a notebook of these cells, open it in JupyterLab and run the first cell once its
    kernel is idle (the others stay for `run_next`)."""
    write_notebook(lab["root"] / name, *sources)
    show_notebook(page, lab, name)
    run_first_cell(page)


def run_next(page: Any, count: int = 1) -> None:
    """Run the selected cell and move on (Shift+Enter in command mode), `count` times; a cell
    that waits (an approval) keeps the later ones queued in the kernel."""
    page.locator(".jp-Notebook").press("Escape")
    for _ in range(count):
        page.keyboard.press("Shift+Enter")


def ask(panel: Any, text: str) -> None:
    box = panel.locator(".cnb-input")
    box.click()
    box.press_sequentially(text)
    box.press("Enter")


def shot(target: Any, name: str) -> None:
    """A screenshot under test-artifacts/ (`name` may name a folder there, made if missing)."""
    path = ARTIFACTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(path))
