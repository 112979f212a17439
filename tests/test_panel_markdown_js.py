"""The chat panel's own renderer (jupyter/panel/markdown.js) under Node, against the same XSS corpus.

The panel builds its transcript from strings: `markdown()` for answers and notes, `diffHtml()`
for edits, each assigned to `innerHTML`; everything else is set as `textContent`. So these two
functions are the level that is real: every payload goes through both, and the HTML they return
passes the same checks as the Python surfaces (tests/html_safety.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import copilot_nb
from tests.html_safety import payloads, violations

RENDERER = Path(copilot_nb.__file__).parent / "jupyter" / "panel" / "markdown.js"
RUN = r"""
const fs = require("fs");
const vm = require("vm");
const context = vm.createContext({});
const source = fs.readFileSync(process.argv[1], "utf8");
vm.runInContext(source + "\n;globalThis.api = { markdown, diffHtml };", context);
const texts = JSON.parse(fs.readFileSync(0, "utf8"));
const out = texts.map((t) => ({ markdown: context.api.markdown(t), diff: context.api.diffHtml(t) }));
process.stdout.write(JSON.stringify(out));
"""
PAYLOADS = payloads()


def render(texts: list[str]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is missing: CI must run the panel renderer's tests")
        pytest.skip("needs node")
    done = subprocess.run(
        [node, "-e", RUN, str(RENDERER)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(done.stdout))


@pytest.fixture(scope="module")
def rendered() -> dict[str, dict[str, Any]]:
    texts = [p["payload"] for p in PAYLOADS] + [
        f"before\n\n{p['payload']}\n\nafter" for p in PAYLOADS
    ]
    out = render(texts)
    n = len(PAYLOADS)
    return {p["id"]: {"alone": out[i], "in-prose": out[i + n]} for i, p in enumerate(PAYLOADS)}


@pytest.mark.parametrize("payload", PAYLOADS, ids=[p["id"] for p in PAYLOADS])
def test_no_payload_becomes_live_html_in_the_panel(payload, rendered):
    for where, html in rendered[payload["id"]].items():
        for function in ("markdown", "diff"):
            markup = html[function]
            assert violations(markup) == [], f"{payload['id']} ({where}) via {function}:\n{markup}"


def test_the_panel_renderer_keeps_formatting_and_safe_links():
    (out,) = render(
        [
            "**bold** `code`\n\n[docs](https://example.org/a?b=1&c=2) ![img](https://example.org/i.png)"
            " [bad](javascript:alert(1))"
        ]
    )
    html = out["markdown"]
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html
    assert '<a href="https://example.org/a?b=1&amp;c=2"' in html
    assert "<img" not in html, "an image is a link: nothing loads by itself"
    assert "javascript:" not in html.split("[bad](")[0] and 'href="javascript' not in html
