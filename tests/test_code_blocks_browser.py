"""A code block of an answer is live, in a `%%copilot` cell and in the chat panel: Copy, Insert as
a cell and, for Python, Run, which goes through the same approval as the model's `run_code`.
JupyterLab in headless Chromium (tests/browser_lab.py); screenshots in test-artifacts/screenshots.
"""

from __future__ import annotations

import pytest

from copilot_nb.testing import reply
from tests.browser_lab import LONG, ask, open_notebook, run_next, shot
from tests.live_page import live_model

pytestmark = pytest.mark.browser

ANSWER = "Here it is:\n\n```python\nanswer = 6 * 7\nprint(answer)\n```\n\nand a shell line:\n\n```sh\nls -l\n```\n"
CODE = "answer = 6 * 7\nprint(answer)"


def test_a_cells_code_block_copies_inserts_below_and_runs_after_approval(page, lab, replies):
    replies.queue.append(reply(ANSWER))
    open_notebook(page, lab, "blocks.ipynb", "%load_ext copilot_nb", "%%copilot\nshow me code")
    run_next(page)
    output = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea-output")
    python = output.locator("pre.cnb-code").first
    python.wait_for(timeout=LONG)
    style = python.evaluate(
        "p => [getComputedStyle(p).backgroundColor, getComputedStyle(p).overflowX]"
    )
    assert style[0] not in ("rgba(0, 0, 0, 0)", "transparent") and style[1] == "auto", style

    bars = output.locator(".cnb-blockbar")
    bars.nth(1).wait_for()
    assert bars.first.locator("button").all_inner_texts() == ["Copy", "Insert as a cell", "Run"]
    assert bars.nth(1).locator("button").all_inner_texts() == ["Copy", "Insert as a cell"], (
        "a shell block is not run in the Python kernel"
    )
    assert page.evaluate("() => !document.querySelector('.jp-OutputArea script')")

    bars.first.get_by_text("Copy").click()
    bars.first.get_by_text("Copied").wait_for()

    bars.first.get_by_text("Insert as a cell").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 4"
    )
    cells = [c["source"] for c in live_model(page)["cells"]]
    assert cells == ["%load_ext copilot_nb", "%%copilot\nshow me code", CODE, ""], (
        "inserted below the cell whose answer it is (above the empty cell Shift+Enter added)"
    )

    bars.first.get_by_text("Run").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert CODE in dialog.locator("pre.cnb-block-approve").inner_text()
    shot(page, "screenshots/code-block-cell-approval.png")
    dialog.locator(".jp-mod-accept").click()
    result = output.locator(".cnb-block-output").first
    page.wait_for_function(
        "el => el.dataset.state === 'ok'", arg=result.element_handle(), timeout=LONG
    )
    assert result.locator(".cnb-block-rendered pre").inner_text() == "42", (
        "what it printed, rendered as a notebook output"
    )
    undo = result.locator(".cnb-block-undo")
    assert undo.locator(".cnb-block-undo-note").inner_text() == (
        "Undo removes answer (the run made it)"
    )
    shot(output.first, "screenshots/code-block-cell.png")
    undo.get_by_role("button", name="Undo").click()
    undo.get_by_text("Put back: kernel variables of run_code: answer", exact=False).wait_for()

    bars.first.get_by_text("Run").click()  # Cancel in the dialog: nothing runs
    dialog.wait_for()
    dialog.locator(".jp-mod-reject").click()
    page.wait_for_function(
        "el => el.dataset.state === 'error'", arg=result.element_handle(), timeout=LONG
    )
    assert "denied" in result.inner_text()
    assert not replies.queue


def test_a_panel_code_block_inserts_below_the_active_cell_and_runs_through_its_approval(
    page, lab, replies
):
    replies.queue.append(reply(ANSWER))
    open_notebook(
        page,
        lab,
        "panel-blocks.ipynb",
        "import copilot_nb\npanel = copilot_nb.chat()",
        "x = 1",
    )
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "show me code")
    bar = panel.locator(".cnb-codebar").first
    bar.wait_for()
    panel.locator(".cnb-send").wait_for()
    assert bar.locator("button:visible").all_inner_texts() == ["Copy", "Insert", "Run"]
    assert panel.locator(".cnb-codebar").nth(1).locator("button:visible").all_inner_texts() == [
        "Copy",
        "Insert",
    ]

    page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").click()
    bar.get_by_text("Insert").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 3"
    )
    cells = [c["source"] for c in live_model(page)["cells"]]
    assert cells[1] == CODE, "below the active cell (the first)"

    bar.get_by_text("Run").click()
    card = panel.locator(".cnb-tool").last
    card.locator(".cnb-approve-btn").wait_for()
    assert card.locator(".cnb-tool-name").inner_text() == "run_code"
    assert CODE in card.locator(".cnb-args").inner_text()
    shot(panel, "screenshots/code-block-panel-approval.png")
    card.locator(".cnb-approve-btn").click()
    page.wait_for_function(
        "el => el.dataset.state === 'ok'", arg=card.element_handle(), timeout=LONG
    )
    assert card.locator(".cnb-output pre").inner_text() == "42", "rendered as a notebook output"
    undo = card.locator(".cnb-undo")
    assert undo.locator(".cnb-undo-note").inner_text() == "Undo removes answer (the run made it)"
    shot(panel, "screenshots/code-block-panel.png")
    undo.get_by_role("button", name="Undo").click()
    undo.get_by_text("Put back: kernel variables of run_code: answer", exact=False).wait_for()
    assert not replies.queue
