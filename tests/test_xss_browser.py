"""A hijacked model's text never runs in JupyterLab: the whole XSS corpus in a real page.

A scripted model answers a `%%copilot --yes` cell with every payload of tests/data/xss (as prose,
in tool arguments, in a file's content and name, in an error), then `%copilot history`, `diff`,
`tools` and the status run, an approval prompt shows a long body full of payloads, and the chat
panel renders the same corpus. Nothing may run (no `window.__xss`), nothing may leave loopback
(the `page` fixture refuses and reports any other request), and no live element may carry an
event handler or a script URL. The approvals show all they ask about, after one click.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from copilot_nb.testing import call, fail, reply
from tests.browser_lab import LONG, ask, open_notebook, run_next, shot
from tests.html_safety import payloads

pytestmark = pytest.mark.browser

PAYLOADS = payloads()
FENCES = [p["payload"] for p in PAYLOADS if p["kind"] == "fence"]
OTHERS = [p["payload"] for p in PAYLOADS if p["kind"] != "fence"]
PROSE = "\n\n".join(OTHERS)
FENCED = "\n\n".join(sorted(FENCES, key=lambda p: p.startswith("   ```")))  # the unclosed one last
EVERYTHING = f"{PROSE}\n\n{FENCED}"
PATH = "<img src=x onerror=\"window.__xss='path'\">.py"
REGEX = "<svg onload=\"window.__xss='regex'\">("
FILE_NAME = "a<svg onload=window.__xss='filename'>.md"
FILE_BODY = "\n".join(["first line", *OTHERS, *FENCES, "```", "last line"]) + "\n"
LAST = "THE LAST LINE OF THE BODY"
BIG = (
    "".join(f"# {n:03d} {PAYLOADS[n % len(PAYLOADS)]['payload'][:40]!r}\n" for n in range(200))
    + f"# {LAST}\n"
)
SCAN = r"""
() => {
  const hidden = /[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g;
  const urls = ["href", "src", "srcset", "action", "formaction", "xlink:href", "data", "poster",
                "background", "srcdoc"];
  const bad = [];
  for (const root of document.querySelectorAll(".jp-Notebook, .cnb-root")) {
    for (const node of [root, ...root.querySelectorAll("*")]) {
      for (const attr of node.attributes) {
        const name = attr.name.toLowerCase();
        const value = attr.value.replace(hidden, "").toLowerCase();
        if (name.startsWith("on")) bad.push(`${node.tagName} ${name}`);
        if (urls.includes(name) && (name === "srcdoc" || /^(javascript|data|vbscript|file):/.test(value)))
          bad.push(`${node.tagName} ${name}=${attr.value}`);
      }
    }
  }
  const outputs = ".jp-OutputArea-output, .cnb-log";
  for (const tag of ["script", "iframe", "object", "embed", "frame", "base", "meta", "form",
                     "style", "math", "link", "img", "video", "audio"])
    for (const node of document.querySelectorAll(`:is(${outputs}) ${tag}`))
      bad.push(`<${tag}> in an output: ${node.outerHTML.slice(0, 120)}`);
  return bad;
}
"""


def scripted_story() -> list[Any]:
    """What the model says, request by request, through the whole test."""
    return [
        # the %%copilot --yes cell
        reply(PROSE, call("read_file", path=PATH)),
        reply(FENCED, call("search_text", regex=REGEX)),
        reply("", call("write_file", path="notes.md", content=FILE_BODY)),
        reply("", call("edit_file", path="notes.md", old_str="first line", new_str=FENCED)),
        reply("", call("write_file", path=FILE_NAME, content=EVERYTHING)),
        reply(EVERYTHING[::-1] + "\n\n" + EVERYTHING),
        # a cell whose request fails with the payloads in the error
        fail(400, PROSE[:2000]),
        # a cell that asks to approve a long Makefile, and is denied
        reply("Writing the Makefile.", call("write_file", path="Makefile", content=BIG)),
        reply("Denied: I leave the Makefile alone."),
        # the chat panel
        reply(EVERYTHING, call("read_file", path=PATH)),
        reply(FENCED, call("write_file", path="conftest.py", content=BIG)),
        reply(PROSE + "\n\nAll done."),
    ]


def test_the_xss_corpus_never_runs_on_any_surface(page, lab, replies, outside):
    started = time.monotonic()
    replies.queue.extend(scripted_story())
    open_notebook(
        page,
        lab,
        "xss.ipynb",
        "%load_ext copilot_nb",
        "%%copilot --yes\nShow me everything",
        "%copilot history",
        "%copilot diff",
        "%copilot tools",
        "%copilot",
        "%%copilot\nThis one fails",
        "%%copilot\nWrite the Makefile",
        "%copilot reset\nimport copilot_nb\ncopilot_nb.chat(sidebar=False)",
    )
    run_next(page, 8)
    cells = page.locator(".jp-Notebook .jp-Cell")
    probe = "https://attacker.example/probe"
    page.evaluate(f"fetch('{probe}').catch(() => null)")
    assert outside == [probe], "the guard sees (and refuses) a request off loopback"
    outside.clear()

    # the approval prompt in the cell: everything it asks about, all of the body after one click
    prompt = cells.nth(7).locator(".jp-OutputArea")
    prompt.get_by_role("button", name="Deny").wait_for(timeout=LONG)
    question = prompt.inner_text()
    assert "write_file wants to change files: Makefile" in question
    assert "Makefile runs code later: make runs its recipes" in question
    last = prompt.get_by_text(LAST)
    assert not last.is_visible(), "the long part starts folded"
    prompt.get_by_role("button", name=re.compile(r"^Show [\d,]+ more lines")).click()
    last.wait_for(state="visible")
    shot(prompt, "xss-1-approval.png")
    prompt.get_by_role("button", name="Deny").click()
    cells.nth(7).get_by_text("Denied: I leave the Makefile alone.").wait_for()
    assert not (lab["root"] / "Makefile").exists()

    # the chat panel renders the corpus; its approval folds nothing away for good
    panel = cells.nth(8).locator(".cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "Show me everything")
    panel.locator(".cnb-approve-btn").wait_for()
    card = panel.locator(".cnb-tool").last
    assert "conftest.py runs code later" in card.locator(".cnb-approve-warn").inner_text()
    args = card.locator(".cnb-args")
    assert LAST not in args.inner_text(), "folded at first: its start and a button for the rest"
    card.locator(".cnb-more").click()
    assert args.evaluate("e => e.scrollHeight <= e.clientHeight + 1"), "all of it shows"
    assert LAST in args.inner_text()
    shot(panel, "xss-2-panel-approval.png")
    card.locator(".cnb-approve-btn").click()
    panel.get_by_text("All done.").wait_for()
    panel.locator(".cnb-send").wait_for()
    assert (lab["root"] / "conftest.py").read_text() == BIG

    # nothing ran, loaded or stayed live anywhere
    assert page.evaluate("window.__xss") is None
    assert len(page.frames) == 1, "no frame was made"
    assert page.evaluate(SCAN) == []
    assert outside == [], f"requests off loopback: {outside}"

    # and every surface showed the payloads as text
    answer = cells.nth(1).locator(".jp-OutputArea").inner_text()
    assert "<img src=x onerror=" in answer and "<script>" in answer
    assert "✓ write_file" in answer and "notes.md" in answer
    assert "✗ read_file" in answer and "✗ search_text" in answer
    assert "<svg onload" in cells.nth(2).locator(".jp-OutputArea").inner_text()  # history
    diff = cells.nth(3).locator(".jp-OutputArea").inner_text()
    assert FILE_NAME in diff and "+</code></pre><img src=x" in diff
    assert "read_file" in cells.nth(4).locator(".jp-OutputArea").inner_text()  # tools
    assert "copilot: model" in cells.nth(5).locator(".jp-OutputArea").inner_text()  # status
    assert "HTTP 400: <img src=x" in cells.nth(6).locator(".jp-OutputArea").inner_text()
    assert "<iframe srcdoc=" in panel.locator(".cnb-answer").first.inner_text()
    shot(page, "xss-3-notebook.png")

    assert not replies.queue
    assert time.monotonic() - started < 90
