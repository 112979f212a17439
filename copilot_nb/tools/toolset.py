"""The one protocol every tool source offers the agent (a ToolSet, or a wrapper around one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from ..config import DEFAULT_TOOL_TIMEOUT
from ..messages import ToolSpec
from .registry import Tool, ToolOutput


@runtime_checkable
class ToolSource(Protocol):
    """Tools the model may be offered: listed for a request, looked up, and called."""

    def __iter__(self) -> Iterator[Tool]: ...

    def get(self, name: str) -> Tool | None: ...

    def list_tools(self) -> list[ToolSpec]: ...

    async def call_tool(
        self, name: str, arguments: Any, *, timeout: float | None = DEFAULT_TOOL_TIMEOUT
    ) -> ToolOutput:
        """Run one call within `timeout` seconds (None: no limit); failures become results."""
        ...
