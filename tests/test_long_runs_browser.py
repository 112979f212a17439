"""A long run in JupyterLab: it goes on after the turn that started it ended, its cell and the
panel show the elapsed time and the output as they grow, and its own Stop button (in the cell,
in the panel) stops the run alone. JupyterLab in headless Chromium (tests/browser_lab.py);
screenshots in test-artifacts/screenshots."""

from __future__ import annotations

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, ask, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

TRAIN = (
    "import time\n"
    "for epoch in range(200):\n"
    "    print('epoch', epoch, 'loss', round(1 / (epoch + 1), 3), flush=True)\n"
    "    time.sleep(0.3)\n"
    "done = True"
)


def test_a_run_that_outlives_its_turn_shows_live_in_its_cell_and_stops_by_its_own_button(
    page, lab, replies
):
    replies.queue.extend(
        [reply("", call("run_code", id="train", code=TRAIN, timeout=120)), reply("Training.")]
    )
    open_notebook(
        page,
        lab,
        "train.ipynb",
        "%load_ext copilot_nb\n%config CopilotMagics.run_wait = 1",
        "%%copilot --yes\ntrain the model",
        "print('the user works on', 1 + 1)",
    )
    run_next(page)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(1)
    page.get_by_text("Training.").wait_for(timeout=LONG)
    view = cell.locator(".copilot-nb-run")
    state = view.locator(".copilot-nb-run-state")
    state.filter(has_text="run-1 (run_code) running").wait_for(timeout=LONG)
    first = state.inner_text()
    page.wait_for_function(  # the widget redraws its HTML: look the state up each time
        "(was) => { const s = document.querySelector('.copilot-nb-run-state');"
        " return s && s.innerText !== was && /running · [1-9]/.test(s.innerText); }",
        arg=first,
        timeout=LONG,
    )
    assert "epoch" in view.locator(".copilot-nb-run-output").inner_text(), "its output, live"
    assert not page.get_by_text("done").count()

    run_next(page)  # the user's own cell runs while the agent's run goes on
    user = page.locator(".jp-Notebook .jp-Cell").nth(2)
    user.get_by_text("the user works on 2").wait_for(timeout=LONG)
    shot(cell, "screenshots/long-run-live.png")

    cell.get_by_role("button", name="Stop run").click()
    state.filter(has_text="stopped by you").wait_for(timeout=LONG)
    assert not cell.get_by_role("button", name="Stop run").count(), "a stopped run has no Stop"
    assert "Training." in cell.inner_text(), "the turn's answer stays"
    shot(cell, "screenshots/long-run-stopped.png")
    assert not replies.queue


SLOW = (
    "import time\nfor step in range(10):\n    print('step', step, flush=True)\n    time.sleep(0.5)"
)


def test_a_cell_the_user_edits_while_the_agent_runs_it_keeps_the_users_edit(page, lab, replies):
    told: list[str] = []

    def answer(request):
        told.append(str(request.messages[-1]["content"]))
        return reply("Noted.")

    replies.queue.extend(
        [reply("", call("run_cell", id="slow", cell_id="#3", timeout=60)), reply("It runs.")]
    )
    open_notebook(
        page,
        lab,
        "slow.ipynb",
        "%load_ext copilot_nb\n%config CopilotMagics.run_wait = 1",
        "%%copilot --yes\nrun the slow cell",
        SLOW,
        "%%copilot\nhow did it go?",
    )
    run_next(page)
    cells = page.locator(".jp-Notebook .jp-Cell")
    page.get_by_text("It runs.").wait_for(timeout=LONG)
    state = cells.nth(1).locator(".copilot-nb-run-state")
    state.filter(has_text="running").wait_for(timeout=LONG)

    ran = cells.nth(2).locator(".jp-OutputArea")  # the cell that runs shows it, live
    ran.get_by_text("▶ run-1, run by the agent:").wait_for(timeout=LONG)
    assert "step 0" in ran.inner_text()
    shot(cells.nth(2), "screenshots/long-run-cell-live.png")
    editor = cells.nth(2).locator(".cm-content")  # the user edits the cell while it runs
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# mine")
    page.keyboard.press("Escape")
    state.filter(has_text="ended after").wait_for(timeout=LONG)

    assert editor.inner_text().rstrip().endswith("# mine"), "the user's edit is kept"
    assert "step 9" not in ran.inner_text(), "the run's outputs never land over the user's edit"
    assert "step 9" in cells.nth(1).locator(".copilot-nb-run-output").inner_text()
    shot(cells.nth(1), "screenshots/long-run-cell-edited.png")

    replies.queue.append(answer)
    cells.nth(3).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    page.get_by_text("Noted.").wait_for(timeout=LONG)
    assert "run-1 (cell" in told[0] and "its outputs are not in the cell" in told[0], told
    assert not replies.queue


def test_the_panel_lists_a_run_going_on_and_its_own_stop_stops_it_alone(page, lab, replies):
    replies.queue.extend(
        [reply("", call("run_code", id="fit", code=TRAIN, timeout=120)), reply("Fitting.")]
    )
    open_notebook(
        page,
        lab,
        "panel-run.ipynb",
        "%load_ext copilot_nb\n%config CopilotMagics.run_wait = 1\n"
        '%config CopilotMagics.approve_execute = "allow"\n'
        "import copilot_nb\npanel = copilot_nb.chat()",
    )
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "fit the model")
    panel.get_by_text("Fitting.").wait_for(timeout=LONG)
    panel.locator(".cnb-send").wait_for(timeout=LONG)  # the turn ended; the run goes on
    row = panel.locator(".cnb-runs .cnb-runrow")
    row.locator(".cnb-runstate").filter(has_text="(run_code) running").wait_for(timeout=LONG)
    first = row.locator(".cnb-runstate").inner_text()
    page.wait_for_function(  # the list is redrawn each second: look the state up each time
        "(was) => { const s = document.querySelector('.cnb-runs .cnb-runstate');"
        " return s && s.innerText !== was && /running · [1-9]/.test(s.innerText); }",
        arg=first,
        timeout=LONG,
    )
    assert row.locator(".cnb-runtail").inner_text().startswith("epoch "), "its last line"
    shot(panel, "screenshots/long-run-panel.png")

    row.get_by_role("button", name="Stop run").click()
    row.locator(".cnb-runstate").filter(has_text="stopped by you").wait_for(timeout=LONG)
    assert not row.get_by_role("button", name="Stop run").count(), "a stopped run has no Stop"
    assert "Fitting." in panel.inner_text(), "the turn's answer stays"
    assert not replies.queue
