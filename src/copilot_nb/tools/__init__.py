"""Tools the agent can call: the registry (`tool`, `Tool`, `ToolSet`) and the built-in toolsets."""

from __future__ import annotations

from .files import file_tools
from .registry import Tool, ToolOutput, ToolSet, tool

__all__ = ["Tool", "ToolOutput", "ToolSet", "file_tools", "tool"]
