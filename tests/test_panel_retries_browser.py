"""Retries in the open chat panel, as in the cell, in a real JupyterLab (headless Chromium): a
broken stream's words are taken back and its answer shows once; a model server that stays down
shows its notice only while the request waits, then the error alone."""

from __future__ import annotations

import pytest

from copilot_nb.testing import fail, reply
from tests.browser_lab import LONG, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

CHAT = "import copilot_nb\npanel = copilot_nb.chat(approvals=copilot_nb.ApprovalPolicy())"
WAIT = {"retry-after-ms": "1500"}


def test_the_panel_takes_back_what_a_cell_took_back(page, lab, replies):
    replies.queue.extend(
        [
            reply("half an ans" * 8, chunk_size=3, delay=0.05, break_after=12),
            reply("Whole answer.", chunk_size=4, delay=0.02),
            *[fail(503, f"overloaded {n}", headers=WAIT) for n in range(3)],
        ]
    )
    open_notebook(page, lab, "retries.ipynb", CHAT, "%%copilot\nanswer me", "%%copilot\nand again")
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    run_next(page)
    panel.get_by_text("Whole answer.").wait_for(timeout=LONG)
    panel.locator(".cnb-send").wait_for(timeout=LONG)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")
    assert "half an ans" not in cell.inner_text(), "the cell took the broken words back"
    assert "half an ans" not in panel.inner_text(), "and so does the panel"
    assert panel.locator(".cnb-answer").count() == 1
    assert panel.locator(".cnb-note").count() == 0, "no notice outlives its wait"

    run_next(page)
    waiting = panel.locator(".cnb-waiting")
    waiting.wait_for(timeout=LONG)
    assert "retrying" in waiting.inner_text()
    shot(panel, "panel-retry-waiting.png")
    panel.locator(".cnb-error").wait_for(timeout=LONG)
    assert panel.locator(".cnb-note").count() == 0, "the notices went with their waits"
    assert "overloaded 2" in panel.locator(".cnb-error").inner_text()
    shot(panel, "panel-retry-failed.png")
    assert not replies.queue
