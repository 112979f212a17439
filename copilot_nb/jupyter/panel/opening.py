"""Where the chat panel opens: `copilot_nb.chat()` shows it in JupyterLab's right-hand sidebar
when `sidecar` is installed (one panel there: opening it again replaces it), else inline, on the
kernel's `%%copilot` session."""

from __future__ import annotations

import os
from typing import Any

from ...agent.session import CopilotSession
from .widget import ChatPanel, execution_count


def chat(session: CopilotSession | None = None, **options: Any) -> ChatPanel:
    """Open the chat panel: in JupyterLab's right sidebar when `sidecar` is installed, else inline.

    In a kernel it continues the conversation of the `%%copilot` cells (their session). Options
    go to `ChatPanel` (`models`, `model`, `mode`, `approvals`, `budget`, `max_rounds`, `title`);
    `sidebar=False` shows it inline even where `sidecar` is installed.
    """
    sidebar = options.pop("sidebar", True)
    panel = ChatPanel(session if session is not None else _kernel_session(), **options)
    panel._shown_at = execution_count()
    panel.discover_models()
    from IPython.display import Markdown, display

    if sidebar and _open_in_sidecar(panel):
        display(
            Markdown(
                "_Copilot chat is open in JupyterLab's right-hand sidebar "
                "(none there? `copilot_nb.chat(sidebar=False)` shows it here)._"
            )
        )
    else:
        display(panel.widget)
    return panel


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
