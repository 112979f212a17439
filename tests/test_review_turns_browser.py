"""Review mode end to end in a real JupyterLab: a `%%copilot` cell's changes apply at once and
wait in place; the user undoes the cell's change and the file's from the page; the next turn's
request tells the model what was undone, so it does not redo it.

The kernel side is the real one (review resolved for the live notebook, the review stamp, the
`review_files` request, the ledger, the file put back from the turn's checkpoint); the page is
copilot_nb's extension as built. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

from typing import Any

import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.browser_lab import LONG, open_notebook, shot
from tests.live_page import live_model, run_cell_at, sources

pytestmark = pytest.mark.browser


def test_a_turn_reviewed_on_the_page_is_what_the_next_turn_hears(page, lab, replies):
    name = "reviewed.ipynb"
    utils = lab["root"] / "utils.py"
    utils.write_text("def f():\n    return 1\n")
    heard: dict[str, Any] = {}

    def next_turn(request: ScriptedRequest) -> ScriptedTurn:
        users = [m for m in request.messages if m.get("role") == "user"]
        heard["block"] = str(users[-1]["content"])
        return reply("Understood: I will leave them.")

    replies.queue.extend(
        [
            reply(
                "",
                call("edit_cell", id="e", cell_id="#2", old_str="total = 1", new_str="total = 2"),
                call("edit_file", id="f", path="utils.py", old_str="return 1", new_str="return 2"),
            ),
            reply("Changed the cell and utils.py."),
            next_turn,
        ]
    )
    open_notebook(
        page,
        lab,
        name,
        "%load_ext copilot_nb",
        "total = 1",
        "%%copilot\nchange them",
        "%%copilot\nwhat now?",
    )
    run_cell_at(page, 2)
    page.get_by_text("Changed the cell and utils.py.").wait_for(timeout=LONG)
    assert sources(page)[1] == "total = 2", "applied at once, nobody asked"
    assert utils.read_text() == "def f():\n    return 2\n"
    review = live_model(page)["cells"][1]["metadata"]["copilot_nb"]["review"]
    assert review["kind"] == "edit" and review["before"]["source"] == "total = 1"
    changed = page.locator(".jp-Notebook .jp-Cell").nth(1)
    changed.locator(".cnb-review-undo").wait_for(timeout=LONG)
    summary = page.locator(".cnb-review-notebook .cnb-review-summary")
    summary.wait_for(timeout=LONG)
    assert summary.inner_text() == "copilot changed 1 cell and 1 file:"
    shot(page, "review-turn-1-changed.png")

    changed.locator(".cnb-review-undo").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.getSource() === 'total = 1'"
    )
    page.locator(".cnb-review-file .cnb-review-undo").click()
    page.locator(".cnb-review-notebook .cnb-review-summary").wait_for(
        state="detached", timeout=LONG
    )
    assert utils.read_text() == "def f():\n    return 1\n", "put back from the checkpoint"
    shot(page, "review-turn-2-undone.png")

    run_cell_at(page, 3)
    page.get_by_text("Understood: I will leave them.").wait_for(timeout=LONG)
    cell_id = live_model(page)["cells"][1]["id"]
    assert f"undone: cell {cell_id} (edit)" in heard["block"]
    assert "undone: file utils.py (edit)" in heard["block"]
    assert not replies.queue
