"""A real JupyterLab for the browser tests and `benchmarks/bench_live.py`: the server and the page.

JupyterLab runs on 127.0.0.1 with a token and a temporary root, its settings, config and
workspaces under a temporary home. The browser is Debian's Chromium (never one a test tool
downloads), started with FLAGS so that no host but loopback even resolves. No pytest here: the
fixtures that use this live in `browser_lab.py`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat

from tests.helpers import free_port, wait_for_http
from tests.patience import SLOWDOWN

CHROMIUM = Path("/usr/bin/chromium")
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


LONG = int(60_000 * SLOWDOWN)  # ms: JupyterLab's first load builds its page from many modules
SHORT = int(30_000 * SLOWDOWN)  # ms: any other wait for the page, unless a test says otherwise
EXPECT = int(10_000 * SLOWDOWN)  # ms: Playwright's `expect`, 5 s by its own default
OFF_LOOPBACK = re.compile(r"^(?!(https?|wss?)://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?([/?#]|$))")
"""URLs that leave the machine (matched in the browser's driver, so loopback costs nothing)."""
SETTINGS = (
    (
        "@jupyterlab/apputils-extension",
        "notification",
        {"fetchNews": "false", "checkForUpdates": False},
    ),
    (
        "@jupyterlab/notebook-extension",
        "tracker",
        {"windowingMode": "none"},
    ),  # every cell in the DOM
)
"""JupyterLab settings (<package>, <plugin>, values) every lab starts with."""
QUIET_COMPLETIONS = ("copilot-nb", "inline-completions", {"enabled": False})
"""Ghost text off: typing in a cell would otherwise ask the tests' scripted model for completions
(only the completion tests, which answer them, turn it on)."""


def write_settings(folder: Path, *, completions: bool = False) -> list[Path]:
    """The settings every lab starts with, in a JupyterLab user-settings folder; the files."""
    written = []
    for package, name, values in (*SETTINGS, *([] if completions else [QUIET_COMPLETIONS])):
        path = folder / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
        written.append(path)
    return written


@contextmanager
def running_lab(
    home: Path,
    *,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
    completions: bool = False,
) -> Iterator[dict[str, Any]]:
    """JupyterLab with its root at home/root, until the block ends; yields its URL and root.

    `env` is added to the server's environment (its kernels inherit it), `args` to its command;
    ghost text is off unless `completions`."""
    root = home / "root"
    root.mkdir(parents=True)
    write_settings(home / "settings", completions=completions)
    port = free_port()
    full_env = {
        **os.environ,
        **(env or {}),
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
            *args,
        ],
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(
            f"{base}/api/status?token={TOKEN}",
            process,
            home / "lab.log",
            what="JupyterLab",
            timeout=60,
        )
        yield {"base": base, "root": root, "home": home}
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def write_notebook(path: Path, *sources: str, cells: Sequence[Any] = ()) -> None:
    """A Python notebook of these code cells (then `cells`, nbformat nodes) at `path`."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.extend(nbformat.v4.new_code_cell(source) for source in sources)
    notebook.cells.extend(cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, path)


def show_notebook(page: Any, lab: dict[str, Any], name: str) -> None:
    """Open the notebook `name` of the lab's root and wait for its first cell and idle kernel."""
    page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)


def answer_kernel_chooser(page: Any) -> None:
    """JupyterLab may ask which kernel while a slow session starts ("Select Kernel"): answered
    with its own choice (Python 3). Any other dialog fails, naming its text."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return
    text = dialog.inner_text()
    if "Select Kernel" not in text:
        raise AssertionError(f"JupyterLab showed a dialog: {text}")
    dialog.locator(".jp-mod-accept").click()
    dialog.wait_for(state="detached", timeout=LONG)


KERNEL_CONNECTED = """() => {
  if (!window.jupyterapp) return true;
  const kernel = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;
  return kernel?.connectionStatus === 'connected' && kernel.status === 'idle';
}"""
"""Whether the open notebook's kernel is connected and idle: a run pressed before that is lost
(the execution indicator may already say idle while the session still connects). A page that
does not expose the app (a hub's single-user server) is taken as ready: the retry covers it."""


def run_first_cell(page: Any) -> None:
    """Run the open notebook's first cell, pressing again if the kernel dropped the request."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    cell = page.locator(".jp-Notebook .jp-Cell").first
    prompt = cell.locator(".jp-InputPrompt")
    deadline = time.monotonic() + LONG / 1000
    while True:
        answer_kernel_chooser(page)
        page.wait_for_function(KERNEL_CONNECTED, timeout=LONG)
        cell.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        # "[*]:" as soon as the request is sent, "[1]:" when done; a run pressed while the
        # session was still connecting is dropped and the prompt stays "[ ]:", so press again
        try:
            prompt.filter(has_text="[ ]:").wait_for(state="detached", timeout=int(2_000 * SLOWDOWN))
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
