"""How a `%%copilot` cell's answer looks in a real JupyterLab (headless Chromium): a Markdown
table reads left-aligned as in the chat panel (JupyterLab right-aligns output tables), and a
column the Markdown aligns keeps its alignment."""

from __future__ import annotations

import pytest

from copilot_nb.testing import reply
from tests.browser_lab import LONG, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

TABLE = "| fruit | colour | count |\n|---|---|--:|\n| apple | red | 3 |\n| banana | yellow | 12 |\n"


def test_a_markdown_table_in_a_cell_reads_left_aligned(page, lab, replies):
    replies.queue.append(reply(f"Here:\n\n{TABLE}"))
    open_notebook(page, lab, "table.ipynb", "%load_ext copilot_nb", "%%copilot\nshow a table")
    run_next(page)
    table = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea table")
    table.wait_for(timeout=LONG)
    aligned = table.evaluate(
        """t => [...t.querySelectorAll('tr')].map(
            row => [...row.children].map(cell => getComputedStyle(cell).textAlign))"""
    )
    assert aligned == [["left", "left", "right"]] * 3, aligned
    shot(table, "screenshots/cell-markdown-table.png")
    assert not replies.queue
