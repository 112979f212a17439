"""The cell that opened the chat panel says where it opened, in words that stay true once the
panel is moved "As tab" (the cell's output is not redrawn then)."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel import opening


@pytest.fixture
def shell():
    """The shared test shell, showing Markdown as a notebook does; panels closed after."""
    from IPython.testing.globalipapp import get_ipython

    ip = get_ipython()
    active = ip.display_formatter.active_types
    ip.display_formatter.active_types = [*active, "text/markdown"]
    yield ip
    ip.display_formatter.active_types = active
    for sidecar, panel in opening._IN_SIDECAR:
        panel.stop()
        sidecar.close()
    opening._IN_SIDECAR.clear()


def test_the_opening_cell_says_where_the_panel_opened_and_how_to_move_it(shell, monkeypatch):
    monkeypatch.delenv("VSCODE_PID", raising=False)
    monkeypatch.delenv("VSCODE_CWD", raising=False)
    with capture_output() as shown:
        opening.chat(CopilotSession())

    (said,) = [output.data["text/markdown"] for output in shown.outputs]
    assert "is open in" not in said, "moved “As tab”, the panel is no longer in the sidebar"
    assert said == (
        "_Copilot chat opened in JupyterLab's right-hand sidebar; “As tab” there moves it "
        "beside your notebook (nowhere to be seen? `copilot_nb.chat(sidebar=False)` shows it "
        "here)._"
    )
