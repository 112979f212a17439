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
from ..text import counted, first_line
from .registry import Tool, ToolOutput, ToolSet
from .schemas.check import own_schema
from .toolset import ToolSource

DEFER_THRESHOLD = 40
"""With more tools than this, the extra ones are found through `tool_search`, not all listed."""
SEARCH_HITS = 10
"""Tools one tool_search call makes available; it says how many more matched."""
NAMES_SHOWN = 12
"""Waiting tools named in tool_search's description; the rest are counted."""
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
    """Core tools always listed. Waiting until `tool_search` finds them (or the model calls one
    by name): the core tools marked `on_request`, and, past `threshold` tools in all, the extra
    ones (the user's and the MCP servers')."""

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
        """Waiting tools found so far; pass a set to keep them beyond this tool set (it is
        updated in place)."""
        over = len(core) + len(extra) > threshold
        self.waiting: tuple[Tool, ...] = (
            *(t for t in core if t.on_request),
            *(extra if over else ()),
        )
        """The tools not listed until found, in the order they are listed once found."""
        self._waiting_names = frozenset(t.name for t in self.waiting)
        self._search = _search_tool(self)

    @property
    def deferring(self) -> bool:
        return bool(self.waiting)

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
        """What the next request offers: the listed tools, then `tool_search` and the tools it
        found, in the order they wait (so a find changes only the end of the list, and the
        prompt before it stays the prefix a provider's cache holds)."""
        if not self.deferring:
            return [t.spec for t in self]
        listed = [t.spec for t in self if t.name not in self._waiting_names]
        found = [t.spec for t in self.waiting if t.name in self.enabled]
        return [*listed, self._search.spec, *found]

    async def call_tool(
        self, name: str, arguments: Any, *, timeout: float | None = DEFAULT_TOOL_TIMEOUT
    ) -> ToolOutput:
        if name == self._search.name and self.deferring:
            return await ToolSet([self._search]).call_tool(name, arguments, timeout=timeout)
        if name in self._waiting_names or name in self.extra:
            self.enabled.add(name)  # called (by name): listed from now on, should it come to wait
        if name in self.core:
            return await self.core.call_tool(name, arguments, timeout=timeout)
        if name in self.extra:
            return await self.extra.call_tool(name, arguments, timeout=timeout)
        return await ToolSet(self).call_tool(name, arguments)

    def search(self, pattern: str) -> list[Tool]:
        """Waiting tools whose name or description matches `pattern` (a case-insensitive regex).

        Raises `regex.error` for a bad pattern and TimeoutError past SEARCH_SECONDS in all."""
        import regex as regex_module  # the `regex` engine, for its timeout

        compiled = regex_module.compile(pattern, regex_module.IGNORECASE)
        deadline = time.monotonic() + SEARCH_SECONDS
        hits = []
        for item in self.waiting:
            left = max(deadline - time.monotonic(), 0.001)
            if compiled.search(item.name, timeout=left) or compiled.search(
                item.description, timeout=left
            ):
                hits.append(item)
        return hits


def tool_search(owner: DeferredToolSet, pattern: str) -> ToolOutput:
    """Find more tools: the first SEARCH_HITS matching ones become listed, and callable, from
    the next request."""
    import regex as regex_module

    try:
        hits = owner.search(pattern)
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
    shown, more = hits[:SEARCH_HITS], len(hits) - SEARCH_HITS
    owner.enabled.update(t.name for t in shown)
    lines = [f"- {t.name}: {first_line(t.description, 200)}" for t in shown]
    if more > 0:
        lines.append(f"({more} more match; a narrower pattern finds them)")
    return ToolOutput(
        content="These tools are now available; call them by name:\n" + "\n".join(lines),
        summary=f"{counted(len(shown), 'tool')} found",
    )


def _search_tool(owner: DeferredToolSet) -> Tool:
    """tool_search for one deferred tool set."""
    return Tool(
        name="tool_search",
        description=(
            f"Find more tools, listed once found: {_waiting_names(owner.waiting)}. Give a regex "
            "matched against their names and descriptions; the matches become callable."
        ),
        parameters=own_schema(
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "case-insensitive regex"},
                },
                "required": ["pattern"],
                "additionalProperties": False,
            }
        ),
        function=functools.partial(tool_search, owner),
        category="read",
    )


def _waiting_names(waiting: Iterable[Tool]) -> str:
    """The waiting tools' names, the first NAMES_SHOWN of them, so the model knows what it can
    find without guessing a pattern."""
    names = [t.name for t in waiting]
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown if len(names) <= NAMES_SHOWN else f"{shown} and {len(names) - NAMES_SHOWN} more"
