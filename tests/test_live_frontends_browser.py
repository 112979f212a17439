"""The live notebook beyond one JupyterLab notebook tab: Notebook 7, the chat panel, two views of
one notebook, "Run All" on opening, and how often the page asks a kernel whether it is ready."""

from __future__ import annotations

import json
import time
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, TOKEN, open_notebook, run_next, shot
from tests.helpers import NOTEBOOK_7_OWN, RESTART_CANCELS_SUBSHELL, wait_until
from tests.lab_server import run_first_cell
from tests.live_page import (
    AGENT_SOURCE,
    USER_SOURCE,
    agent_story,
    live_model,
    no_dialog,
    on_disk,
    run_cell_at,
    sources,
)

pytestmark = pytest.mark.browser


def test_notebook_7_sees_and_takes_the_agents_cell(page, lab, replies, known_page_errors):
    known_page_errors.append(NOTEBOOK_7_OWN)
    name = "nb7.ipynb"
    path = lab["root"] / name
    replies.queue.extend(agent_story())
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext copilot_nb"),
        nbformat.v4.new_code_cell(USER_SOURCE),
        nbformat.v4.new_code_cell("%%copilot --yes\nadd a cell after mine"),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, path)
    page.goto(f"{lab['base']}/notebooks/{name}?token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    run_first_cell(page)  # the kernel chooser answered, pressed again if dropped
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Control+Enter")
    page.get_by_text("Added a cell after yours").wait_for(timeout=LONG)
    assert sources(page)[2] == AGENT_SOURCE
    shot(page, "live-5-notebook7.png")
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    no_dialog(page)
    assert on_disk(path)[2] == AGENT_SOURCE
    assert (
        json.loads(path.read_text())["cells"][2]["metadata"]["copilot_nb"]["change"] == "inserted"
    )
    assert not replies.queue


def test_the_chat_panel_edits_the_open_notebook_too(page, lab, replies):
    from tests.browser_lab import ask

    replies.queue.extend(
        [
            reply(
                "Adding it.",
                call(
                    "insert_cell",
                    after_cell_id="#1",
                    cell_type="markdown",
                    source="## From the panel",
                ),
            ),
            reply("Added a heading."),
        ]
    )
    open_notebook(
        page,
        lab,
        "panel.ipynb",
        "import copilot_nb\npanel = copilot_nb.chat(approvals=copilot_nb.ApprovalPolicy())",
    )
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "Add a heading after the first cell")
    panel.locator(".cnb-approve-btn").click(timeout=LONG)
    panel.get_by_text("Added a heading.").wait_for(timeout=LONG)
    assert sources(page)[1] == "## From the panel"
    assert live_model(page)["cells"][1]["metadata"]["copilot_nb"]["change"] == "inserted"
    shot(page, "live-9-from-the-panel.png")
    assert not replies.queue


def test_a_kernel_without_copilot_nb_is_probed_once_per_cell_run_not_in_a_loop(page, lab, replies):
    probes: list[float] = []

    def watch(socket: Any) -> None:
        def frame(payload: Any) -> None:
            data = payload if isinstance(payload, bytes) else str(payload).encode()
            if b"comm_info_request" in data:
                probes.append(time.monotonic())

        socket.on("framesent", frame)

    page.on("websocket", watch)
    open_notebook(page, lab, "plain.ipynb", "x = 1", "y = 2")
    page.wait_for_timeout(2_000)  # the sync API sees events only while it is called
    after_first = len(probes)
    run_cell_at(page, 1)
    page.wait_for_timeout(3_000)
    assert 1 <= after_first <= 4, probes
    assert len(probes) - after_first == 1, "one probe per cell run, none after its own reply"


def test_two_views_of_one_notebook_are_one_live_notebook(page, lab, replies):
    replies.queue.extend(
        [
            reply(
                "", call("insert_cell", after_cell_id="#1", cell_type="code", source=AGENT_SOURCE)
            ),
            reply("Added once."),
        ]
    )
    open_notebook(page, lab, "views.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd a cell")
    page.evaluate("window.jupyterapp.commands.execute('docmanager:clone')")
    page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel').length === 2")
    run_cell_at(page, 1)  # the %%copilot cell, in the new view
    page.get_by_text("Added once.").first.wait_for(timeout=LONG)
    assert sources(page).count(AGENT_SOURCE) == 1
    editors = page.locator(".jp-NotebookPanel .jp-InputArea-editor").filter(has_text=AGENT_SOURCE)
    assert editors.count() == 2, "both views show the one change"
    shot(page, "live-10-two-views.png")
    assert not replies.queue


def test_run_all_on_opening_is_live_from_the_first_request(page, lab, replies):
    """Run All at once: the cell that loads copilot_nb and the request right after it, before
    the page has probed the kernel; the kernel's hello attaches the notebook in time."""
    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "insert_cell", id="i", after_cell_id="#1", cell_type="code", source=AGENT_SOURCE
                ),
            ),
            lambda request: reply(request.tool_results["i"].split(":")[0].split("(")[-1]),
        ]
    )
    open_notebook(page, lab, "runall.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd a cell")
    run_next(page)
    page.locator(".jp-Notebook .jp-Cell .jp-InputArea-editor").filter(
        has_text=AGENT_SOURCE
    ).wait_for(timeout=LONG)
    assert on_disk(lab["root"] / "runall.ipynb")[1] != AGENT_SOURCE, "not the file"
    wait_until(lambda: not replies.queue, what="the model asked again after the tool's result")


def test_run_all_on_opening_reviews_the_first_request(page, lab, replies):
    """Run All at once in review mode (the default): the request right after the cell that
    loads copilot_nb waits for the page the hello brings, and reviews there, nobody asked."""
    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "insert_cell", id="i", after_cell_id="#1", cell_type="code", source=AGENT_SOURCE
                ),
            ),
            reply("Added for review."),
        ]
    )
    open_notebook(page, lab, "runall_review.ipynb", "%load_ext copilot_nb", "%%copilot\nadd a cell")
    run_next(page)
    page.get_by_text("Added for review.").wait_for(timeout=LONG)
    cells = live_model(page)["cells"]
    assert cells[1]["source"] == AGENT_SOURCE
    assert cells[1]["metadata"]["copilot_nb"]["review"]["kind"] == "insert"
    assert page.get_by_role("button", name="Approve").count() == 0, "applied at once, unasked"
    assert not replies.queue


def test_after_a_kernel_restart_the_notebook_is_live_again(page, lab, replies, known_page_errors):
    known_page_errors.append(RESTART_CANCELS_SUBSHELL)
    replies.queue.extend(
        [
            reply(
                "",
                call("insert_cell", after_cell_id="#1", cell_type="code", source=AGENT_SOURCE),
            ),
            reply("Added after the restart."),
        ]
    )
    open_notebook(page, lab, "restart.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd a cell")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).executionCount"
    )
    page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    page.wait_for_timeout(1_000)
    run_cell_at(page, 0)  # %load_ext again, in the new kernel; the request queues behind it
    run_cell_at(page, 1)
    page.get_by_text("Added after the restart.").wait_for(timeout=LONG)
    assert sources(page)[1] == AGENT_SOURCE, "the new kernel edits the open notebook"
    assert on_disk(lab["root"] / "restart.ipynb")[1] != AGENT_SOURCE
    assert not replies.queue


def test_a_renamed_notebook_stays_live_under_its_new_name(page, lab, replies):
    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "insert_cell", id="i", after_cell_id="#1", cell_type="code", source=AGENT_SOURCE
                ),
            ),
            lambda request: reply("Result: " + request.tool_results["i"].split("\n")[0]),
        ]
    )
    open_notebook(page, lab, "before.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd a cell")
    page.evaluate("window.jupyterapp.shell.currentWidget.context.rename('after.ipynb')")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.context.path === 'after.ipynb'"
    )
    run_cell_at(page, 1)
    page.get_by_text("Result: ").wait_for(timeout=LONG)
    said = page.get_by_text("Result: ").inner_text()
    assert "in after.ipynb" in said and "live: open in" in said, said
    assert sources(page)[1] == AGENT_SOURCE
    assert on_disk(lab["root"] / "after.ipynb")[1] != AGENT_SOURCE
    assert not replies.queue
