"""Where the chat panel opens: `copilot_nb.chat()` shows it in JupyterLab's right-hand sidebar
when `sidecar` is installed (one panel there: opening it again replaces it), else inline, on the
kernel's `%%copilot` session. After a kernel restart the front-end extension runs `reopen()`, fixed
code of ours, to bring back a panel that was open on that kernel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...agent.session import CopilotSession
from .widget import ChatPanel, execution_count

OPENED = (
    "_Copilot chat opened in JupyterLab's right-hand sidebar; “As tab” there moves it beside "
    "your notebook (nowhere to be seen? `copilot_nb.chat(sidebar=False)` shows it here)._"
)
"""What the cell that opened the panel says: where it opened, which stays true once the panel
moves to a tab (the cell's output is not redrawn then), and how to move it."""


def chat(session: CopilotSession | None = None, **options: Any) -> ChatPanel:
    """Open the chat panel: in JupyterLab's right sidebar when `sidecar` is installed, else inline.

    In a kernel it continues the conversation of the `%%copilot` cells (their session). Options
    go to `ChatPanel` (`models`, `model`, `mode`, `approvals`, `budget`, `max_rounds`, `title`);
    `sidebar=False` shows it inline even where `sidecar` is installed.
    """
    sidebar = options.pop("sidebar", True)
    panel = _new_panel(session if session is not None else _kernel_session(), **options)
    panel._shown_at = execution_count()
    from IPython.display import Markdown, display

    if sidebar and _open_in_sidecar(panel):
        display(Markdown(OPENED))
    else:
        display(panel.widget)
    return panel


REOPEN_CODE = '__import__("copilot_nb.jupyter.panel.opening", fromlist=["_"]).reopen()'
"""What the extension runs, silently, in a restarted kernel whose panel was open (`chatReopen.ts`
holds the same text): `__import__` so the user's namespace gains no name."""


def reopen() -> ChatPanel:
    """The panel again after a kernel restart, in the sidebar, resuming the notebook's conversation.

    Raises where there is no sidebar to show it in: an inline panel from a silent run would show
    nowhere, and the extension tells the old panel why instead.
    """
    try:
        import sidecar  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("the sidebar needs the `sidecar` package (pip install sidecar)") from exc
    panel = _new_panel(_kernel_session())
    _open_in_sidecar(panel)
    return panel


def _new_panel(session: CopilotSession, **options: Any) -> ChatPanel:
    """A panel on this session that knows its kernel (so the extension can reopen it)."""
    panel = ChatPanel(session, **options)
    panel.widget.kernel = kernel_id()
    panel.discover_models()
    return panel


def kernel_id() -> str:
    """This kernel's id as Jupyter's server knows it (its connection file is `kernel-ID.json`);
    empty outside such a kernel."""
    try:
        from ipykernel.connect import get_connection_file

        name = Path(get_connection_file()).stem
    except Exception:  # no kernel app here (a script, a test): no id to give
        return ""
    return name.removeprefix("kernel-") if name.startswith("kernel-") else ""


def _kernel_session() -> CopilotSession:
    """The kernel's `%%copilot` session (loading the extension), else a session of its own."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return CopilotSession()
    from ..extension import session as kernel_session

    return kernel_session(shell)


def _open_in_sidecar(panel: ChatPanel) -> bool:
    """Show the panel in a `sidecar` (JupyterLab's right-hand area); False where there is none."""
    if os.environ.get("VSCODE_PID") or os.environ.get("VSCODE_CWD"):
        return False  # VS Code renders widgets but has no sidecar
    try:
        from sidecar import Sidecar
    except ImportError:
        return False
    from ..turn_mirrors import stop_mirroring

    for sidecar, previous in _IN_SIDECAR:  # running the cell again replaces the panel
        previous.stop()
        stop_mirroring(previous.session, previous.cell_turns)
        sidecar.close()
    sidecar = Sidecar(title=panel.widget.title, anchor="right")
    sidecar.append_display_data(panel.widget)
    _IN_SIDECAR[:] = [(sidecar, panel)]
    return True


_IN_SIDECAR: list[tuple[Any, ChatPanel]] = []
