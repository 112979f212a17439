"""What the built-in tools work on: one context, handed to each tool as its first argument.

A built-in tool is a module-level function `name(ctx, **arguments)`. Its factory (`file_tools`,
`notebook_tools`, ...) binds one context to it with `registry.bound_tool`, and the model sees the
other arguments only. So a reader finds a tool by its name, and a test calls it directly with a
context of its own: `await read_cell(ToolContext(workspace=ws), cell_id="#0")`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError
from ..workspace.workspace import Workspace
from .review.ledger import ReviewBook


def no_notebook() -> str | None:
    """No kernel notebook: a notebook tool then needs its `notebook=` argument."""
    return None


def no_namespace() -> dict[str, Any]:
    """An empty namespace, for a context without a kernel."""
    return {}


def no_model() -> str:
    """No model name known (a tool called outside a turn)."""
    return ""


class LiveNotebook(Protocol):
    """A notebook open in a front end, reached through the kernel's channel to it."""

    app: str
    """The front end's name as it gives it ("JupyterLab", "Jupyter Notebook")."""

    async def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request; its result, or ToolError when the front end refuses or is gone."""
        ...


class LiveNotebooks(Protocol):
    """The open notebooks of this kernel's front ends (`jupyter/live_channel.py`)."""

    async def find(self, path: Path) -> LiveNotebook | None:
        """The open notebook at this absolute path, or None: the tools then use the file."""
        ...

    def current_path(self) -> Path | None:
        """The notebook whose front end sent the request running now, if one is attached."""
        ...

    def fallback_note(self) -> str:
        """Why no open notebook answered, and how to get live editing ("" when expected)."""
        ...

    def attached(self) -> bool:
        """Whether a notebook front end is attached (where review mode can review)."""
        ...

    def extension_missing(self) -> bool:
        """Whether the front end answered that it has no copilot_nb extension (none attached)."""
        ...

    async def attach_soon(self) -> bool:
        """`attached`, waiting a few seconds for a front end where one may be coming."""
        ...

    @property
    def review(self) -> ReviewBook:
        """The review ledger: the turn under review, the user's Keep and Undo (`review.py`)."""
        ...


@dataclass(kw_only=True)
class NotebookViews:
    """What the model last saw of each notebook, and the lock that makes each read-modify-write
    of a notebook one step. An edit from a view that is out of date is refused rather than
    applied over the user's work: for a file, `seen` holds the digest of its bytes (the user
    saved it in between); for an open notebook, `cells_seen` holds each cell's source as the
    model last saw it (the user typed in the cell in between)."""

    seen: dict[str, str] = field(default_factory=dict)
    cells_seen: dict[str, dict[str, str]] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    hinted: bool = False
    """Whether a result already said how to get live editing (said once per conversation)."""


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
    live: LiveNotebooks | None = None
    """The notebooks open in a front end (None: the notebook tools use files only)."""
    model_name: Callable[[], str] = no_model
    """The model of the turn running now, recorded in the metadata of the cells it changes."""
    model_provider: Callable[[], str] = no_model
    """Its provider (`openai`, `copilot`, …), recorded beside it."""
    notebooks: NotebookViews = field(default_factory=NotebookViews)

    def need_workspace(self) -> Workspace:
        """The workspace; a tool that touches files was given a context without one is our bug."""
        if self.workspace is None:
            raise ConfigError("this tool works on files; give its ToolContext a workspace")
        return self.workspace
