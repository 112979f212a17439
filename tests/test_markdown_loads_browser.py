"""Markdown the notebook tools let through loads nothing from elsewhere in real JupyterLab.

Every payload of tests/data/markdown_loads that `remote_loads` finds safe is rendered as a Markdown
cell in JupyterLab in headless Chromium, and every request the page makes is recorded: none may
leave the Jupyter server's origin. So that this test can fail, the payloads an earlier check let
through are rendered too, and at least one of them must make the page ask for attacker.invalid
(the `page` fixture refuses such requests, and no host but loopback resolves).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import nbformat
import pytest

from copilot_nb.tools.notebook.markdown_loads import remote_loads
from tests.browser_lab import LONG, shot
from tests.lab_server import show_notebook, write_notebook

pytestmark = pytest.mark.browser

CORPUS = json.loads(
    (Path(__file__).parent / "data" / "markdown_loads" / "payloads.json").read_text("utf-8")
)["payloads"]
SAFE = [p for p in CORPUS if not remote_loads(p["markdown"])]
BYPASSES = [p for p in CORPUS if p.get("bypass")]


def render(page: Any, lab: dict[str, Any], name: str, markdowns: list[str]) -> list[str]:
    """Open a notebook of these Markdown cells (and a last one whose image we wait for); the
    URLs the page asked for from the moment it opened until it was quiet for a second."""
    sentinel = f"sentinel-{name}.png"
    cells = [nbformat.v4.new_markdown_cell(m) for m in [*markdowns, f"![]({sentinel})"]]
    write_notebook(lab["root"] / name, "1", cells=cells)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    show_notebook(page, lab, name)
    page.wait_for_function(
        f"document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length >= {len(cells)}",
        timeout=LONG,
    )
    deadline = time.monotonic() + 30
    while not any(sentinel in url for url in asked) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert any(sentinel in url for url in asked), "the last cell's image was asked for"
    count = -1
    while count != len(asked) and time.monotonic() < deadline:  # quiet for a second
        count = len(asked)
        page.wait_for_timeout(1_000)
    return asked


def off_origin(urls: list[str], base: str) -> list[str]:
    """The URLs on another origin than the Jupyter server's (its websockets included in it)."""
    server = urlsplit(base)
    return [
        url
        for url in urls
        if not url.startswith(("data:", "blob:", "about:"))
        and (urlsplit(url).hostname, urlsplit(url).port) != (server.hostname, server.port)
    ]


def test_markdown_the_tools_let_through_loads_nothing_from_elsewhere(page, lab, outside):
    started = time.monotonic()
    assert len(SAFE) >= 30
    asked = render(page, lab, "safe.ipynb", [p["markdown"] for p in SAFE])
    shot(page, "markdown-loads-safe.png")
    assert off_origin(asked, lab["base"]) == []
    assert outside == []
    assert any("/plot.png" in url for url in asked), "relative images load, from the server"
    print(f"{len(SAFE)} safe payloads rendered in {time.monotonic() - started:.1f}s")


def test_markdown_the_tools_refuse_does_load_from_elsewhere(page, lab, outside):
    """The test above can fail: what the pattern-based check let through, JupyterLab fetches."""
    assert len(BYPASSES) == 8 and all(remote_loads(p["markdown"]) for p in BYPASSES)
    asked = render(page, lab, "bypasses.ipynb", [p["markdown"] for p in BYPASSES])
    elsewhere = off_origin(asked, lab["base"])
    assert elsewhere, "at least one of them makes the page ask for attacker.invalid"
    assert all("attacker.invalid" in url for url in elsewhere), elsewhere
    fetched = sorted({url.rsplit("/", 1)[-1] for url in elsewhere})
    print(f"fetched when rendered: {fetched}")
    outside.clear()  # refused by the fixture's guard, as intended here
