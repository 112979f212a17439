"""What the browser tests of completions while you type share: the loopback model that completes
from the prompt the kernel built, and the page helpers (a notebook that defined `df`, the ghost
text, the cell's source).

The model completes only from what the kernel sent it: after `df.` it names the first column the
kernel listed for `df`, so ghost text that names a real column shows the kernel's context reached
the model. Requests that are not completions (a `%%copilot` turn) go to the scripted replies.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from copilot_nb.testing import ScriptedRequest, reply
from tests.patience import SLOWDOWN

COMPLETION_PROMPT = "You complete code"
COLUMNS = re.compile(r"#\s+columns: (.+)")
CURSOR = "<CURSOR>"

SETUP = (
    "%load_ext copilot_nb\n"
    "import pandas as pd\n"
    'df = pd.DataFrame({"revenue_eur": [1.5, 2.5], "units_sold": [3, 4]})'
)
ATTACHED = (
    "import asyncio\n"
    "from copilot_nb.jupyter.live_channel import live_channel\n"
    f"for _ in range({int(400 * SLOWDOWN)}):\n"
    "    if live_channel(get_ipython()).views:\n"
    "        break\n"
    "    await asyncio.sleep(0.05)\n"
    'print("attached:", bool(live_channel(get_ipython()).views))'
)
"""A cell that waits (awaiting, so the comm is handled meanwhile) until this notebook attached:
20 s on an idle machine, scaled with the run (a busy run attached after that and the cell said
`attached: False`, which the page then waited for in vain)."""

GHOSTS_SEEN = """
(() => {
  window.__ghosts = [];
  new MutationObserver(() => {
    for (const node of document.querySelectorAll('.jp-GhostText')) {
      const text = node.textContent;
      if (text && window.__ghosts[window.__ghosts.length - 1] !== text) {
        window.__ghosts.push(text);
      }
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
})()
"""
"""Records every ghost text the page shows, so a test can say one never appeared."""


class CompletionModel:
    """The completions side of the loopback model: answers from the kernel's prompt."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.models: list[str] = []
        """The model each completion request named on the wire."""
        self.delays: dict[str, float] = {}
        """Seconds to wait before answering, by the text before the cursor."""
        self.failure: Any = None
        self.lock = threading.Lock()

    def __call__(self, request: ScriptedRequest) -> Any:
        prompt = str(request.messages[-1]["content"])
        with self.lock:
            self.prompts.append(prompt)
            self.models.append(str(request.body.get("model", "")))
            failure = self.failure
        if failure is not None:
            return failure
        before = prompt.rsplit(CURSOR, 1)[0].rsplit("\n", 1)[-1]
        time.sleep(self.delays.get(before, 0.0))
        return reply(complete(before, prompt))

    def asked(self, before: str) -> int:
        """How many prompts had this text before the cursor (on the cursor's line)."""
        with self.lock:
            return sum(p.rsplit(CURSOR, 1)[0].endswith("\n" + before) for p in self.prompts)


def complete(before: str, prompt: str) -> str:
    """After `df.` and the start of a name: the rest of the first column the kernel listed."""
    match = re.search(r"df\.(\w*)$", before)
    found = COLUMNS.search(prompt)
    if not match or not found:
        return ""
    typed = match.group(1)
    columns = [part.split(" (")[0].strip() for part in found.group(1).split(", ")]
    for column in columns:
        if column.startswith(typed):
            return column[len(typed) :] + ".mean()"
    return ""


class Router:
    """Completion requests to the completion model, the rest to the scripted replies."""

    def __init__(self, completions: CompletionModel, replies: Any) -> None:
        self.completions = completions
        self.replies = replies

    def __call__(self, request: ScriptedRequest) -> Any:
        system = request.messages[0] if request.messages else {}
        if str(system.get("content", "")).startswith(COMPLETION_PROMPT):
            return self.completions(request)
        return self.replies(request)


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def source_of(page: Any, index: int) -> str:
    return str(
        page.evaluate(
            "i => window.jupyterapp.shell.currentWidget.content.model.cells.get(i)"
            ".sharedModel.getSource()",
            index,
        )
    )


def ghosts_seen(page: Any) -> list[str]:
    return list(page.evaluate("window.__ghosts"))


def type_in(page: Any, index: int, text: str) -> None:
    """Click into a cell (at the end of its text) and type, key by key."""
    cell(page, index).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text, delay=30)
