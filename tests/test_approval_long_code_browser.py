"""Code to approve is seen before it is approved, in a real JupyterLab (headless Chromium), and
the same way wherever the action came from: a `%%copilot` cell's prompt, a code block's Run
dialog, the chat panel's card. A 30-line script shows whole, with no box of its own to scroll
above Approve; a 60-line one its first 40 lines and "Show 20 more lines", and Approve (Run)
is enabled once that is open. Screenshots in test-artifacts/screenshots."""

from __future__ import annotations

from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, ask, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

CHAT = "import copilot_nb\npanel = copilot_nb.chat(approvals=copilot_nb.ApprovalPolicy())"
MATTERS = "result = sum([step_0, step_1])  # the line that matters"


def script(lines: int) -> str:
    return "\n".join([*(f"step_{n} = {n}" for n in range(lines - 1)), MATTERS]) + "\n"


SHORT, LONG_SCRIPT = script(30), script(60)


def own_scroll(code: Any) -> dict[str, Any]:
    """Whether a code box scrolls by itself (its end out of sight above the button)."""
    return code.evaluate(
        """el => ({
          scrolls: el.scrollHeight > el.clientHeight + 1,
          maxHeight: getComputedStyle(el).maxHeight,
        })"""
    )


def above(first: Any, second: Any) -> bool:
    """Whether `first` ends above where `second` starts (in the same scroll)."""
    a, b = first.bounding_box(), second.bounding_box()
    return a is not None and b is not None and a["y"] + a["height"] <= b["y"] + 1


def test_long_code_is_seen_before_it_is_approved_in_a_cell_a_dialog_and_the_panel(
    page, lab, replies
):
    replies.queue.extend(
        [
            reply("", call("run_code", id="short", code=SHORT)),
            reply("Left it."),
            reply("", call("run_code", id="long", code=LONG_SCRIPT)),
            reply(f"Ran it. Here it is again:\n\n```python\n{LONG_SCRIPT}```\n"),
            reply("", call("run_code", id="panel", code=LONG_SCRIPT)),
            reply("Ran it here too."),
        ]
    )
    open_notebook(
        page, lab, "long-code.ipynb", CHAT, "%%copilot\nclean it", "%%copilot\nclean it all"
    )
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)

    # a cell, 30 lines: all of it, the line that matters right above Approve
    run_next(page)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")
    approve = cell.get_by_role("button", name="Approve")
    approve.wait_for(timeout=LONG)
    code = cell.locator(".widget-html pre")
    assert MATTERS in code.inner_text()
    assert own_scroll(code) == {"scrolls": False, "maxHeight": "none"}
    assert approve.is_enabled() and above(code, approve)
    assert not cell.get_by_role("button", name="Show 20 more lines").count()
    shot(cell, "screenshots/approval-cell-30-lines.png")
    cell.get_by_role("button", name="Deny").click()
    cell.get_by_text("Left it.").wait_for(timeout=LONG)

    # a cell, 60 lines: the first 40, and Approve once the other 20 are shown
    page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-InputPrompt").click()
    run_next(page)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-OutputArea")
    approve = cell.get_by_role("button", name="Approve")
    approve.wait_for(timeout=LONG)
    code = cell.locator(".widget-html pre")
    assert "step_39 = 39" in code.inner_text() and MATTERS not in code.inner_text()
    assert approve.is_disabled()
    shot(cell, "screenshots/approval-cell-60-lines-folded.png")
    cell.get_by_role("button", name="Show 20 more lines").click()
    cell.locator(".widget-html pre", has_text=MATTERS).wait_for()
    page.wait_for_function("el => !el.disabled", arg=approve.element_handle())
    assert own_scroll(code)["scrolls"] is False and above(code, approve)
    shot(cell, "screenshots/approval-cell-60-lines-shown.png")
    approve.click()
    cell.get_by_text("Here it is again").wait_for(timeout=LONG)

    # the answer's code block, Run: the dialog asks the same way
    cell.locator(".cnb-blockbar").first.get_by_text("Run").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert (
        dialog.locator(".jp-Dialog-header")
        .inner_text()
        .startswith("run_code wants to run code: step_0 = 0")
    ), "the cell's question"
    run = dialog.locator(".jp-mod-accept")
    block = dialog.locator("pre.cnb-block-approve")
    assert MATTERS not in block.inner_text() and run.is_disabled()
    dialog.dispatch_event("keydown", {"key": "Enter"})  # accepting it early approves nothing
    dialog.wait_for(state="detached")
    shown = cell.locator(".cnb-block-output").first
    page.wait_for_function(
        "el => el.dataset.state === 'error'", arg=shown.element_handle(), timeout=LONG
    )
    cell.locator(".cnb-blockbar").first.get_by_text("Run").click()
    dialog.wait_for()
    assert own_scroll(dialog.locator(".jp-Dialog-body"))["scrolls"] is False
    dialog.get_by_role("button", name="Show 20 more lines").click()
    assert MATTERS in block.inner_text() and run.is_enabled()
    assert above(block, run), "Run comes after all of the code"
    shot(page, "screenshots/approval-dialog-60-lines.png")
    run.click()
    page.wait_for_function(
        "el => el.dataset.state === 'ok'", arg=shown.element_handle(), timeout=LONG
    )

    # the panel: the same fold, Approve once the rest is shown
    ask(panel, "run it here")
    card = panel.locator(".cnb-tool").last
    approve = card.locator(".cnb-approve-btn")
    approve.wait_for(timeout=LONG)
    args = card.locator(".cnb-args")
    assert "step_39 = 39" in args.inner_text() and MATTERS not in args.inner_text()
    assert approve.is_disabled() and "Show 20 more lines" in (approve.get_attribute("title") or "")
    card.get_by_role("button", name="Show 20 more lines").click()
    assert MATTERS in args.inner_text() and approve.is_enabled()
    assert own_scroll(args)["scrolls"] is False and above(args, approve)
    shot(panel, "screenshots/approval-panel-60-lines.png")
    approve.click()
    panel.get_by_text("Ran it here too.").wait_for(timeout=LONG)
    assert not replies.queue
