"""The tools an agent gets inside a kernel: the notebook it serves and the kernel's namespace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..workspace.notebook_file import current_notebook_path
from ..workspace.workspace import Workspace
from .context import LiveNotebooks, ToolContext, no_model
from .kernel.tools import kernel_toolset
from .notebook.cells import notebook_toolset
from .notebook.rebuild_cells import rebuild_toolset
from .notebook.run_cell import cell_run_toolset
from .registry import ToolSet


def kernel_toolsets(
    shell: Any,
    workspace: Workspace,
    *,
    live: LiveNotebooks | None = None,
    model_name: Callable[[], str] = no_model,
    model_provider: Callable[[], str] = no_model,
) -> list[ToolSet]:
    """Notebook and kernel tools bound to an IPython shell, for the magic and the chat panel.

    The current notebook and the namespace are looked up at each call (`__session__`,
    `JPY_SESSION_NAME`, `__vsc_ipynb_file__`), since a front end may set them after the tools
    are made. `live` reaches the notebooks open in a front end; without it the tools use files.
    """

    def namespace() -> dict[str, Any]:
        user_ns: dict[str, Any] = shell.user_ns
        return user_ns

    def current_notebook() -> str | None:
        return current_notebook_path(shell.user_ns)

    ctx = ToolContext(
        workspace=workspace,
        current_notebook=current_notebook,
        namespace=namespace,
        shell=shell,
        live=live,
        model_name=model_name,
        model_provider=model_provider,
    )
    return [notebook_toolset(ctx), kernel_toolset(ctx), cell_run_toolset(ctx), rebuild_toolset(ctx)]
