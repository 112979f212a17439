"""Interrupting the kernel during a `%%copilot` turn in JupyterLab: the cell keeps the partial
answer and ends with one line, ■ Stopped, never a traceback (headless Chromium,
tests/browser_lab.py; the screenshot is the closing note's "interrupted cell")."""

from __future__ import annotations

import pytest

from copilot_nb.testing import reply
from tests.browser_lab import LONG, open_notebook, run_next, shot

pytestmark = pytest.mark.browser


def test_an_interrupted_cell_keeps_its_words_and_says_stopped(page, lab, replies):
    replies.queue.append(reply("Once upon a time, " * 400, chunk_size=6, delay=0.03))
    open_notebook(page, lab, "stop.ipynb", "%load_ext copilot_nb", "%%copilot\ntell a story")
    run_next(page)
    output = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")
    output.get_by_text("Once upon a time").first.wait_for(timeout=LONG)
    page.keyboard.press("Escape")
    page.keyboard.press("i")
    page.keyboard.press("i")  # Kernel > Interrupt
    output.get_by_text("■ Stopped").wait_for(timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    assert not output.locator("[data-mime-type*='error'], [data-mime-type*='stderr']").count()
    assert "CancelledError" not in output.inner_text()
    told = output.inner_text()
    assert 0 < told.count("Once upon a time") < 400
    shot(output, "screenshots/interrupted-cell.png")
