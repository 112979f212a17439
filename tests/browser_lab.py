"""JupyterLab in headless Chromium for the browser tests: the server, the page, and helpers.

JupyterLab runs on 127.0.0.1 with a token and a temporary root; its kernels talk to a loopback
ScriptedServer whose replies the tests queue. The browser is Debian's Chromium (never one a test
tool downloads). Every request the page makes to a host other than loopback is refused and
recorded: a test fails on any (`page` fixture), since model text must never make the page load
something from elsewhere. Screenshots go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

from copilot_nb.testing import ScriptedServer, fail

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
TOKEN = "copilot-nb-browser-test"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # a second guard: no host but loopback resolves, so nothing could leave even unrouted
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]
LONG = 60_000  # ms: JupyterLab's first load builds its page from many modules
OFF_LOOPBACK = re.compile(r"^(?!(https?|wss?)://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?([/?#]|$))")
"""URLs that leave the machine (matched in the browser's driver, so loopback costs nothing)."""


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


@pytest.fixture(scope="module")
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
    """A JupyterLab server whose kernels use the scripted model; yields its URL and root."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(
                f"{CHROMIUM} is missing: CI must run the browser tests (.ci/run installs it)"
            )
        pytest.skip(f"needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    root.mkdir()
    settings = home / "settings" / "@jupyterlab"
    for extension, name, values in (
        ("apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
        ("notebook-extension", "tracker", {"windowingMode": "none"}),  # every cell in the DOM
    ):
        (settings / extension).mkdir(parents=True)
        (settings / extension / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    server = ScriptedServer(responder=shared_replies).start()
    port = _free_port()
    env = {
        **os.environ,
        "COPILOT_NB_MODEL": "openai:scripted",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "k",
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    log = (home / "lab.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",  # CI runs as root
            "--LabApp.extension_manager=readonly",
            # window.jupyterapp in JupyterLab and Notebook 7, to read the live model
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, process, home / "lab.log")
        yield {"base": base, "root": root, "home": home}
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        server.stop()


@pytest.fixture
def outside() -> list[str]:
    """URLs the page asked for on a host other than loopback (each was refused)."""
    return []


@pytest.fixture
def known_page_errors() -> list[re.Pattern[str]]:
    """Uncaught page errors a test knows to come from the application itself, not from us."""
    return []


@pytest.fixture
def page(
    lab: dict[str, Any], tmp_path: Path, outside: list[str], known_page_errors: list[Any]
) -> Iterator[Any]:
    """A Chromium tab; fails the test on an uncaught page error or any request off loopback."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": 1440, "height": 900},
        )
        context.route(OFF_LOOPBACK, lambda route: _refuse(route, outside))
        try:
            tab = context.new_page()
            tab.on("pageerror", lambda exc: errors.append(_first_lines(exc)))
            tab.set_default_timeout(30_000)
            yield tab
            errors = [e for e in errors if not any(k.search(e) for k in known_page_errors)]
            assert not errors, f"uncaught errors in the page: {errors}"
            assert not outside, f"the page asked for URLs off loopback: {outside}"
        finally:
            context.close()


def _first_lines(exc: Any) -> str:
    """An uncaught page error: its message and where it was thrown."""
    stack = getattr(exc, "stack", None) or ""
    return "\n".join([str(exc), *stack.splitlines()[1:4]])


def _refuse(route: Any, outside: list[str]) -> None:
    outside.append(route.request.url)
    route.abort("blockedbyclient")


def open_notebook(page: Any, lab: dict[str, Any], name: str, *sources: str) -> None:
    """Write a notebook of these cells, open it in JupyterLab and run the first cell once its
    kernel is idle (the others stay for `run_next`)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    notebook = nbformat.v4.new_notebook()
    notebook.cells.extend(nbformat.v4.new_code_cell(source) for source in sources)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, lab["root"] / name)
    page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    cell = page.locator(".jp-Notebook .jp-Cell").first
    prompt = cell.locator(".jp-InputPrompt")
    deadline = time.monotonic() + LONG / 1000
    while True:
        cell.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        # "[*]:" once the request is sent, "[1]:" when done; a run pressed while the session
        # was still connecting is dropped and the prompt stays "[ ]:", so press again
        try:
            prompt.filter(has_text="[ ]:").wait_for(state="detached", timeout=5_000)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise


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
    target.screenshot(path=str(ARTIFACTS / name))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_server(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/api/status?token={TOKEN}", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"JupyterLab did not start within 60s:\n{log.read_text()[-3000:]}")
