"""Tiny wrappers around a tool set: what the model may use, and what it must first look for.

`FilteredToolSet` applies `available` / `excluded` name filters (an allow-list, when given,
wins). `DeferredToolSet` keeps a large catalogue out of the request: past a threshold, only the
core tools are listed with a `tool_search` tool, and the tools the model finds become listed
from its next request on. Both offer what the agent uses of a ToolSet: iteration, `get`,
`list_tools` and `call_tool`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ..config import DEFAULT_TOOL_TIMEOUT
from ..messages import ToolSpec
from ..text import first_line
from .registry import Tool, ToolOutput, ToolSet
from .schema_check import own_schema
from .toolset import ToolSource

DEFER_THRESHOLD = 40
"""With more tools than this, the extra ones are found through `tool_search`, not all listed."""
SEARCH_SECONDS = 1.0
"""Longest a tool_search pattern may run over the whole catalogue: a backtracking pattern from
the model must not hold the kernel's loop."""


class FilteredToolSet:
    """The tools of `inner` whose names pass the filters; others are unknown to the model."""

    def __init__(
        self,
        inner: ToolSource,
        *,
        available: Iterable[str] | None = None,
        excluded: Iterable[str] = (),
    ) -> None:
        self.inner = inner
        self.available = None if available is None else frozenset(available)
        self.excluded = frozenset(excluded)

    def allows(self, name: str) -> bool:
        if self.available is not None:
            return name in self.available
        return name not in self.excluded

    def __iter__(self) -> Iterator[Tool]:
        return (t for t in self.inner if self.allows(t.name))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.allows(name) and self.inner.get(name) is not None

    def get(self, name: str) -> Tool | None:
        return self.inner.get(name) if self.allows(name) else None

    def list_tools(self) -> list[ToolSpec]:
        """What the inner set lists (so a deferred catalogue stays deferred), filtered."""
        return [spec for spec in self.inner.list_tools() if self.allows(spec.name)]

    async def call_tool(
        self, name: str, arguments: Any, *, timeout: float | None = DEFAULT_TOOL_TIMEOUT
    ) -> ToolOutput:
        if self.allows(name):
            return await self.inner.call_tool(name, arguments, timeout=timeout)
        return await ToolSet(self).call_tool(name, arguments)  # the usual "unknown tool" result


class DeferredToolSet:
    """Core tools always listed; past `threshold` tools in all, the extra ones wait to be found."""

    def __init__(
        self,
        core: ToolSet,
        extra: ToolSet,
        *,
        threshold: int = DEFER_THRESHOLD,
        enabled: set[str] | None = None,
    ) -> None:
        self.core = core
        self.extra = extra
        self.threshold = threshold
        self.enabled: set[str] = set() if enabled is None else enabled
        """Extra tools found so far; pass a set to keep them beyond this tool set (it is
        updated in place)."""
        self._search = _search_tool(self)

    @property
    def deferring(self) -> bool:
        return len(self.core) + len(self.extra) > self.threshold

    def __iter__(self) -> Iterator[Tool]:
        yield from self.core
        yield from self.extra

    def __len__(self) -> int:
        return len(self.core) + len(self.extra)

    def __contains__(self, name: object) -> bool:
        return name in self.core or name in self.extra

    def get(self, name: str) -> Tool | None:
        if name == self._search.name and self.deferring:
            return self._search
        return self.core.get(name) or self.extra.get(name)

    def list_tools(self) -> list[ToolSpec]:
        """What the next request offers: everything, or the core, the found ones and the search."""
        if not self.deferring:
            return [t.spec for t in self]
        found = [t.spec for t in self.extra if t.name in self.enabled]
        return [*self.core.list_tools(), *found, self._search.spec]

    async def call_tool(
        self, name: str, arguments: Any, *, timeout: float | None = DEFAULT_TOOL_TIMEOUT
    ) -> ToolOutput:
        if name == self._search.name and self.deferring:
            return await ToolSet([self._search]).call_tool(name, arguments, timeout=timeout)
        if name in self.core:
            return await self.core.call_tool(name, arguments, timeout=timeout)
        if name in self.extra:
            self.enabled.add(name)  # called by name: keep it listed from now on
            return await self.extra.call_tool(name, arguments, timeout=timeout)
        return await ToolSet(self).call_tool(name, arguments)

    def search(self, pattern: str, limit: int = 10) -> list[Tool]:
        """Extra tools whose name or description matches `pattern` (a case-insensitive regex).

        Raises `regex.error` for a bad pattern and TimeoutError past SEARCH_SECONDS in all."""
        import regex as regex_module  # the `regex` engine, for its timeout

        compiled = regex_module.compile(pattern, regex_module.IGNORECASE)
        deadline = time.monotonic() + SEARCH_SECONDS
        hits = []
        for item in self.extra:
            left = max(deadline - time.monotonic(), 0.001)
            if compiled.search(item.name, timeout=left) or compiled.search(
                item.description, timeout=left
            ):
                hits.append(item)
        return hits[:limit]


def tool_search(owner: DeferredToolSet, pattern: str, limit: int = 10) -> ToolOutput:
    """Find more tools: the matching ones become listed, and callable, from the next request."""
    import regex as regex_module

    try:
        hits = owner.search(pattern, limit)
    except regex_module.error as exc:
        return ToolOutput(
            content=f"tool_search: {pattern!r} is not a valid regex ({exc}); try a plain word",
            is_error=True,
        )
    except TimeoutError:
        return ToolOutput(
            content=f"tool_search: {pattern!r} took longer than {SEARCH_SECONDS:g} s; "
            "it backtracks catastrophically, try a plain word",
            is_error=True,
        )
    if not hits:
        return ToolOutput(
            content=f"tool_search: no tool matches {pattern!r}; try a broader pattern",
            summary="no match",
        )
    owner.enabled.update(t.name for t in hits)
    lines = [f"- {t.name}: {first_line(t.description, 200)}" for t in hits]
    return ToolOutput(
        content="These tools are now available; call them by name:\n" + "\n".join(lines),
        summary=f"{len(hits)} tool(s) found",
    )


def _search_tool(owner: DeferredToolSet) -> Tool:
    """tool_search for one deferred tool set, with limits the model's schema states."""
    return Tool(
        name="tool_search",
        description=(
            "Find more tools: many are not listed until searched for. Give a regex matched "
            "against tool names and descriptions; the matching tools become callable."
        ),
        parameters=own_schema(
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "case-insensitive regex"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                },
                "required": ["pattern"],
                "additionalProperties": False,
            }
        ),
        function=functools.partial(tool_search, owner),
        category="read",
    )
