"""The chat panel in a real JupyterLab, driven through headless Chromium by Playwright.

JupyterLab runs on 127.0.0.1 with a token and a temporary root; its kernels talk to a loopback
ScriptedServer. Screenshots of each step go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import os
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

from copilot_nb.testing import ScriptedServer, call, fail, reply

pytestmark = pytest.mark.browser

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
]
LONG = 60_000  # ms: JupyterLab's first load builds its page from many modules


class Replies:
    """What the scripted model says next; tests queue replies as their story goes."""

    def __init__(self) -> None:
        self.queue: deque[Any] = deque()

    def __call__(self, request: Any) -> Any:
        return self.queue.popleft() if self.queue else fail(500, "unscripted request")


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
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
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
def page(lab: dict[str, Any], tmp_path: Path) -> Iterator[Any]:
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
        try:
            tab = context.new_page()
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.set_default_timeout(30_000)
            yield tab
            assert not errors, f"uncaught errors in the page: {errors}"
        finally:
            context.close()


def open_notebook(page: Any, lab: dict[str, Any], name: str, source: str) -> None:
    """Write a one-cell notebook, open it in JupyterLab and run the cell once its kernel is idle."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(source))
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


def ask(panel: Any, text: str) -> None:
    box = panel.locator(".cnb-input")
    box.click()
    box.press_sequentially(text)
    box.press("Enter")


def shot(target: Any, name: str) -> None:
    target.screenshot(path=str(ARTIFACTS / name))


def test_chat_in_the_sidebar_streams_approves_an_edit_and_stops(page, lab, replies):
    (lab["root"] / "hello.py").write_text('print("hello, world")\n')
    replies.queue.extend(
        [
            reply(
                "Hello from **the scripted model**. Here is what I can do:\n\n"
                "- read and edit your files\n- look at your notebook\n\n"
                "```python\nprint('hi')\n```\n",
                chunk_size=4,
                delay=0.01,
            ),
            reply(
                "Let me change the greeting.",
                call(
                    "edit_file", path="hello.py", old_str="hello, world", new_str="hello, notebook"
                ),
            ),
            reply("Done: `hello.py` now prints **hello, notebook**."),
            reply("Once upon a time, " * 600, chunk_size=6, delay=0.02),
            reply("Still here."),
        ]
    )
    open_notebook(page, lab, "chat.ipynb", "import copilot_nb\npanel = copilot_nb.chat()")
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    cells_before = page.locator(".jp-Notebook .jp-Cell").count()

    box = panel.locator(".cnb-input")
    box.click()
    box.press_sequentially("Say hello")
    box.press("Shift+Enter")  # a new line in the box, not "run cell"
    box.press_sequentially("and be brief")
    box.press("Enter")
    answer = panel.locator(".cnb-answer").first
    answer.locator("pre code").wait_for()
    panel.locator(".cnb-send").wait_for()
    assert panel.locator(".cnb-user").first.inner_text() == "Say hello\nand be brief"
    assert answer.locator("strong").inner_text() == "the scripted model"
    assert answer.locator("li").count() == 2
    assert answer.locator("pre code").inner_text() == "print('hi')"
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells_before, (
        "keys leaked to the notebook"
    )
    shot(page, "panel-1-answer.png")

    ask(panel, "Change the greeting in hello.py")
    approve = panel.locator(".cnb-approve-btn")
    approve.wait_for()
    card = panel.locator(".cnb-tool").last
    assert card.locator(".cnb-tool-name").inner_text() == "edit_file"
    assert "+hello, notebook" in card.locator(".cnb-args").inner_text()
    assert (lab["root"] / "hello.py").read_text() == 'print("hello, world")\n'
    shot(panel, "panel-2-approval.png")
    approve.click()
    panel.get_by_text("now prints").wait_for()
    assert (lab["root"] / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert card.get_attribute("data-state") == "ok"
    assert '+print("hello, notebook")' in card.locator(".cnb-args").inner_text()
    shot(panel, "panel-3-edited.png")

    ask(panel, "Tell me a long story")
    panel.get_by_text("Once upon a time").first.wait_for()
    clicked = time.monotonic()
    panel.locator(".cnb-stop").click()
    panel.locator(".cnb-stopped").wait_for(timeout=5_000)
    panel.locator(".cnb-send").wait_for(timeout=5_000)
    assert time.monotonic() - clicked < 2.0, (
        "Stop takes effect at once (a round trip to the kernel)"
    )
    story = panel.locator(".cnb-answer").last.inner_text()
    assert 0 < len(story) < len("Once upon a time, " * 600) / 2
    shot(panel, "panel-4-stopped.png")

    ask(panel, "Are you still there?")
    panel.get_by_text("Still here.").wait_for()
    assert not page.locator(".jp-OutputArea-output[data-mime-type*='stderr']").count()
    assert not page.locator(".jp-OutputArea-output[data-mime-type*='error']").count()
    shot(page, "panel-5-sidebar.png")
    assert not replies.queue


def test_model_text_never_becomes_live_html(page, lab, replies):
    replies.queue.append(
        reply(
            'Look: <img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> '
            "[click me](javascript:window.__xss=3) and [docs](https://example.org/a?b=1&c=2)",
            chunk_size=7,
        )
    )
    open_notebook(page, lab, "inline.ipynb", "import copilot_nb\ncopilot_nb.chat(sidebar=False)")
    panel = page.locator(".jp-Notebook .jp-OutputArea .cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "Show me something odd")
    answer = panel.locator(".cnb-answer")
    answer.get_by_text("and").wait_for()
    panel.locator(".cnb-send").wait_for()
    assert answer.locator("img, script").count() == 0
    assert "<img src=x" in answer.inner_text()
    links = answer.locator("a")
    assert links.count() == 1
    assert links.first.get_attribute("href") == "https://example.org/a?b=1&c=2"
    assert page.evaluate("window.__xss") is None
    shot(panel, "panel-6-inline-escaped.png")


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
