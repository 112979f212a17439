"""What run_code printed and drew, in JupyterLab: folded under the tool's line in the `%%copilot`
cell, and opened, the figure once and the printed table as a notebook shows them. JupyterLab in
headless Chromium (tests/browser_lab.py); screenshots in test-artifacts/screenshots."""

from __future__ import annotations

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

PLOT = (
    "import matplotlib.pyplot as plt\n"
    "from IPython.display import display\n"
    "import pandas as pd\n"
    "fig, ax = plt.subplots(figsize=(3, 1.5), dpi=60)\n"
    "ax.plot([1, 3, 2])\n"
    "display(fig)\n"
    "print('group | mean')\n"
    "pd.DataFrame({'group': ['a', 'b'], 'mean': [2.0, 3.5]})"
)


def test_a_runs_figure_and_table_show_folded_under_its_line_once(page, lab, replies):
    replies.queue.extend([reply("", call("run_code", id="plot", code=PLOT)), reply("Drawn.")])
    open_notebook(
        page, lab, "plot.ipynb", "%load_ext copilot_nb\n%matplotlib inline", "%%copilot --yes\nplot"
    )
    run_next(page)
    output = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea-output")
    page.get_by_text("Drawn.").wait_for(timeout=LONG)

    fold = output.locator("details").filter(has_text="output:")
    assert fold.count() == 1 and not fold.evaluate("d => d.open"), "folded, like a diff"
    assert "image/png" in fold.locator("summary").inner_text()
    fold.locator("summary").click()

    assert output.locator("img").count() == 1, "the figure shows once"
    width = output.locator("img").evaluate("img => img.naturalWidth")
    assert width > 100, "a real image, drawn from its own bytes"
    assert "group | mean" in fold.inner_text()
    assert fold.locator("table td").all_inner_texts() == ["a", "2.0", "b", "3.5"]
    assert page.evaluate("() => !document.querySelector('.jp-OutputArea script')")
    shot(output.first, "screenshots/run-code-output.png")
    assert not replies.queue
