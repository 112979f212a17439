"""A cell the agent ran, reviewed in a real JupyterLab: its Undo puts back what its bar promised.

The agent edits a cell and runs it, and inserts a cell and runs it, in a `%%copilot` turn in
review mode. Each bar says which variables its Undo puts back; the user clicks Undo on each, and
the kernel's variables are as they were before the runs (read by running code in the kernel).
Nothing the agent itself writes into a cell (its outputs, count and record after the run) ever
reaches the kernel as the user's Keep. After a kernel restart, a ran cell's bar says the values
it kept went with the kernel instead of promising them; and the notebook's count follows each
Keep and Undo.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.browser_lab import LONG, open_notebook, shot
from tests.helpers import RESTART_CANCELS_SUBSHELL
from tests.live_page import run_cell_at
from tests.review_page import (
    CELLS,
    bars,
    cell,
    cells_of,
    edit,
    in_kernel,
    outcomes,
    send,
    watch_events,
)

pytestmark = pytest.mark.browser

SETUP = (
    '%load_ext copilot_nb\n%config CopilotMagics.approve_execute = "allow"',
    "import pandas as pd\n"
    "sample = list(range(100))\n"
    "df = pd.DataFrame({'x': [1.0, None, 3.0, None]})",
    "print(len(sample))",
)
STATE = "print(len(sample), len(df))"


def kernel_says(page: Any, wanted: str, code: str = STATE) -> str:
    """What `code` prints in the notebook's kernel, once it prints `wanted` (or the last try)."""
    deadline = time.monotonic() + 30
    said = in_kernel(page, code).strip()
    while said != wanted and time.monotonic() < deadline:
        page.wait_for_timeout(200)
        said = in_kernel(page, code).strip()
    return said


def edit_run_insert_run(ids: dict[str, str]) -> list[Any]:
    """Edit cell 2 and insert a cell after it, then run both, then answer."""

    def run_both(request: ScriptedRequest) -> ScriptedTurn:
        ids["new"] = request.tool_results["i"].split()[2]
        return reply(
            "",
            call("run_cell", id="r1", cell_id=ids["edited"]),
            call("run_cell", id="r2", cell_id=ids["new"]),
        )

    return [
        reply(
            "",
            call(
                "edit_cell",
                id="e",
                cell_id=ids["edited"],
                old_str="print(len(sample))",
                new_str="sample = sample[:50]",
            ),
            call(
                "insert_cell",
                id="i",
                after_cell_id=ids["edited"],
                cell_type="code",
                source="df = df.dropna()",
            ),
        ),
        run_both,
        reply("Trimmed sample and dropped df's missing rows."),
    ]


def start(page: Any, lab: dict[str, Any], name: str, *more: str) -> list[dict[str, Any]]:
    """The notebook open, its setup cell run, the page attached to the kernel; its cells."""
    open_notebook(page, lab, name, *SETUP, *more)
    run_cell_at(page, 1)
    assert kernel_says(page, "100 4") == "100 4"
    send(page, lab["root"] / name, "snapshot")  # attached: the turn reviews in the page
    return cells_of(page)


def test_undo_of_cells_the_agent_ran_puts_back_the_variables_their_bars_promise(page, lab, replies):
    name = "ran_undo.ipynb"
    events = watch_events(page)
    cells = start(page, lab, name, "%%copilot\ntrim sample and drop the empty rows")
    ids = {"edited": cells[2]["id"]}
    replies.queue.extend(edit_run_insert_run(ids))
    run_cell_at(page, 3)
    page.get_by_text("Trimmed sample and dropped").wait_for(timeout=LONG)
    assert kernel_says(page, "50 2") == "50 2", "the agent's runs changed the kernel"

    edited, inserted = cell(page, 2), cell(page, 3)
    promise = edited.locator(".cnb-review-ran")
    promise.filter(has_text="Undo puts back sample").wait_for(timeout=LONG)
    assert "Undo puts back sample as it was before the run" in promise.inner_text()
    assert (
        "Undo puts back df as it was before the run"
        in inserted.locator(".cnb-review-ran").inner_text()
    )
    # The page sends what it decides in the task that sees a write, before it asks the kernel
    # to vouch for the new record; the promise shows only once the kernel answered.
    assert outcomes(events) == [], "the agent's own outputs and record are nobody's Keep"
    shot(page, "review-ran-1-promised.png")

    edited.locator(".cnb-review-undo").click()
    inserted.locator(".cnb-review-undo").click()
    assert bars(page).count() == 0
    assert [c["source"] for c in cells_of(page)][2:4] == [
        "print(len(sample))",
        "%%copilot\ntrim sample and drop the empty rows",
    ]
    assert kernel_says(page, "100 4") == "100 4", "each Undo put back what its bar said"
    assert outcomes(events) == [
        (ids["edited"], "undone", "button"),
        (ids["new"], "undone", "button"),
    ]
    shot(page, "review-ran-2-undone.png")
    assert not replies.queue


def test_after_a_restart_a_ran_cells_bar_says_undo_puts_back_the_cell_only(
    page, lab, replies, known_page_errors
):
    known_page_errors.append(RESTART_CANCELS_SUBSHELL)
    name = "ran_restart.ipynb"
    cells = start(page, lab, name, "%%copilot\ntrim sample")
    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "edit_cell",
                    id="e",
                    cell_id=cells[2]["id"],
                    old_str="print(len(sample))",
                    new_str="sample = sample[:50]",
                ),
            ),
            reply("", call("run_cell", id="r", cell_id=cells[2]["id"])),
            reply("Trimmed sample."),
        ]
    )
    run_cell_at(page, 3)
    page.get_by_text("Trimmed sample.").wait_for(timeout=LONG)
    said = cell(page, 2).locator(".cnb-review-ran")
    said.filter(has_text="Undo puts back sample").wait_for(timeout=LONG)

    page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
    said.filter(has_text="The kernel restarted since the run").wait_for(timeout=LONG)
    assert "Undo puts back the cell only" in said.inner_text()
    assert "sample" not in said.inner_text(), "no promise the restart took away"
    shot(page, "review-ran-3-restarted.png")

    run_cell_at(page, 0)  # copilot_nb in the new kernel: it is another process
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    send(page, lab["root"] / name, "snapshot")
    assert "The kernel restarted since the run" in said.inner_text()


def test_keep_and_undo_drop_the_notebooks_count(page, lab):
    name = "count.ipynb"
    open_notebook(page, lab, name, *CELLS)
    before = cells_of(page)
    changes = [edit(before[1], "a = 10"), edit(before[2], "b = 20"), edit(before[3], "c = 30")]
    send(page, lab["root"] / name, "apply", changes=changes)
    summary = page.locator(".cnb-review-notebook .cnb-review-summary")
    summary.filter(has_text="copilot changed 3 cells:").wait_for(timeout=LONG)

    cell(page, 1).locator(".cnb-review-keep").click()
    summary.filter(has_text="copilot changed 2 cells:").wait_for()
    cell(page, 2).locator(".cnb-review-undo").click()
    summary.filter(has_text="copilot changed 1 cell:").wait_for()
    cell(page, 3).locator(".cnb-review-keep").click()
    page.locator(".cnb-review-notebook").wait_for(state="hidden")
