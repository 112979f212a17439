"""What the built-in tools work on: one context, handed to each tool as its first argument.

A built-in tool is a module-level function `name(ctx, **arguments)`. Its factory (`file_tools`,
`notebook_tools`, ...) binds one context to it with `registry.bound_tool`, and the model sees the
other arguments only. So a reader finds a tool by its name, and a test calls it directly with a
context of its own: `await read_cell(ToolContext(workspace=ws), cell_id="#0")`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..workspace.workspace import Workspace


def no_notebook() -> str | None:
    """No kernel notebook: a notebook tool then needs its `notebook=` argument."""
    return None


def no_namespace() -> dict[str, Any]:
    """An empty namespace, for a context without a kernel."""
    return {}


@dataclass(kw_only=True)
class NotebookViews:
    """What the model last saw of each notebook (a digest of its bytes), and the lock that makes
    each read-modify-write of a notebook one step. An edit from a view that is out of date (the
    user saved the notebook in between) is refused rather than applied over the user's work."""

    seen: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """The workspace, the kernel's notebook and namespace, and the notebook tools' state."""

    workspace: Workspace | None = None
    current_notebook: Callable[[], str | None] = no_notebook
    """The path of the notebook this kernel runs, looked up at each call (None: unknown)."""
    namespace: Callable[[], dict[str, Any]] = no_namespace
    """The kernel's live namespace (`user_ns`), looked up at each call."""
    shell: Any | None = None
    """The IPython shell, for its history and last traceback (None outside a kernel)."""
    notebooks: NotebookViews = field(default_factory=NotebookViews)

    def need_workspace(self) -> Workspace:
        """The workspace; a tool that touches files was given a context without one is our bug."""
        if self.workspace is None:
            raise ConfigError("this tool works on files; give its ToolContext a workspace")
        return self.workspace
