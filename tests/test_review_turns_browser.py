"""Review mode end to end in a real JupyterLab: a `%%copilot` cell's changes apply at once and
wait in place; the user undoes the cell's change and the file's from the page; the next turn's
request tells the model what was undone, so it does not redo it. Keep and Undo made while the
kernel restarts reach the kernel once it is back.

The kernel side is the real one (review resolved for the live notebook, the review stamp, the
`review_files` request, the ledger, the file put back from the turn's checkpoint); the page is
copilot_nb's extension as built. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.browser_lab import LONG, open_notebook, shot
from tests.helpers import RESTART_CANCELS_SUBSHELL
from tests.live_page import live_model, run_cell_at, sources
from tests.review_page import (
    CELLS,
    bars,
    cell,
    cells_of,
    edit,
    insert,
    outcomes,
    send,
    watch_events,
)

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


def told(request: Any) -> str:
    """The text of the request's latest user message: the context block and the prompt."""
    users = [m for m in request.messages if m.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_the_real_agent_in_review_mode_and_the_next_turn_hears_what_was_undone(page, lab, replies):
    name = "agent_review.ipynb"
    (lab["root"] / "hello.py").write_text('GREETING = "hi"\n')
    open_notebook(
        page,
        lab,
        name,
        "%load_ext copilot_nb",
        "a = 1",
        "b = 1",
        "%%copilot\nchange a and b, and greet louder",
        "%%copilot\nwhat now?",
    )
    a, b = (c["id"] for c in cells_of(page)[1:3])
    heard: dict[str, str] = {}

    def hear(request: Any) -> Any:
        heard["block"] = told(request)
        return reply("Understood.")

    replies.queue.extend(
        [
            reply(
                "",
                call("edit_cell", id="ea", cell_id=a, old_str="a = 1", new_str="a = 2"),
                call("edit_cell", id="eb", cell_id=b, old_str="b = 1", new_str="b = 2"),
                call("edit_file", id="f", path="hello.py", old_str='"hi"', new_str='"HELLO"'),
            ),
            reply("Changed a and b, and hello.py."),
            hear,
        ]
    )
    # the page attached (a turn that starts before it does asks instead of reviewing)
    send(page, lab["root"] / name, "snapshot")
    run_cell_at(page, 3)
    page.get_by_text("Changed a and b, and hello.py.").wait_for(timeout=LONG)
    bars(page).nth(1).wait_for()
    summary = page.locator(".cnb-review-notebook .cnb-review-summary")
    summary.wait_for()
    assert summary.inner_text() == "copilot changed 2 cells and 1 file:"
    assert (lab["root"] / "hello.py").read_text() == 'GREETING = "HELLO"\n', "applied at once"
    page.locator(".cnb-review-file summary .cnb-review-path").click()
    shot(page, "review-10-real-agent.png")

    cell(page, 1).locator(".cnb-review-undo").click()
    cell(page, 2).locator(".cnb-review-keep").click()
    page.locator(".cnb-review-file .cnb-review-undo").click()
    page.locator(".cnb-review-notebook").wait_for(state="hidden", timeout=LONG)
    assert (lab["root"] / "hello.py").read_text() == 'GREETING = "hi"\n', "the kernel put it back"
    assert [c["source"] for c in cells_of(page)][1:3] == ["a = 1", "b = 2"]

    run_cell_at(page, 4)
    page.get_by_text("Understood.").wait_for(timeout=LONG)
    block = heard["block"]
    assert f"undone: cell {a} (edit)" in block, block
    assert f"kept: cell {b} (edit)" in block, block
    assert "undone: file hello.py (edit)" in block, block
    assert not replies.queue


def test_keep_and_undo_work_while_the_kernel_restarts_and_the_kernel_hears_later(
    page, lab, known_page_errors
):
    known_page_errors.append(RESTART_CANCELS_SUBSHELL)
    name = "restart_review.ipynb"
    events = watch_events(page)
    open_notebook(page, lab, name, *CELLS)
    before = cells_of(page)
    added = insert(before[2]["id"], "added = 1")
    send(page, lab["root"] / name, "apply", changes=[edit(before[2], "b = 20"), added])
    bars(page).nth(1).wait_for(timeout=LONG)
    page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)

    cell(page, 2).locator(".cnb-review-undo").click()
    cell(page, 3).locator(".cnb-review-keep").click()
    assert bars(page).count() == 0
    assert [c["source"] for c in cells_of(page)][2:4] == ["b = 2", "added = 1"]
    page.wait_for_timeout(1_000)
    assert outcomes(events) == [], "no kernel with copilot_nb to tell yet: queued"

    run_cell_at(page, 0)  # %load_ext in the new kernel: the page attaches and sends what waited
    deadline = time.monotonic() + 30
    while len(outcomes(events)) < 2 and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert outcomes(events) == [
        (before[2]["id"], "undone", "button"),
        (added["cell"]["id"], "kept", "button"),
    ]
