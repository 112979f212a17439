"""Tools the agent can call: the registry (`tool`, `Tool`, `ToolSet`) and the built-in toolsets."""

from __future__ import annotations

from ..workspace.workspace import Workspace
from .files.tools import file_tools
from .kernel.tools import kernel_tools
from .notebook.cells import notebook_tools
from .registry import Tool, ToolOutput, ToolSet, tool
from .search.tools import search_tools


def workspace_tools(workspace: Workspace) -> ToolSet:
    """Every built-in tool that works on files: read, write, edit, list, find, search, move, delete."""
    return ToolSet([*file_tools(workspace), *search_tools(workspace)])


__all__ = [
    "Tool",
    "ToolOutput",
    "ToolSet",
    "file_tools",
    "kernel_tools",
    "notebook_tools",
    "search_tools",
    "tool",
    "workspace_tools",
]
