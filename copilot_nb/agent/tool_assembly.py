"""The tools a turn offers, assembled from their sources: built-ins, the model family's own, the
user's, the MCP servers'; then the name filters, then the deferral behind `tool_search`.

Pure assembly over what the session holds (`CopilotSession.tools_for` calls it), so the turn's
code and the tools' code each stay small, and `%copilot tools` lists exactly what a turn offers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..models.base import Model
from ..tools import Tool, ToolSet
from ..tools.mcp.servers import McpServers
from ..tools.wrappers import DeferredToolSet, FilteredToolSet
from ..workspace.workspace import Workspace
from .approvals.ask_user import ask_user_tool
from .prompt.families import family_for, family_of
from .skills.tool import skill_tools
from .subagents import delegate_tool

ToolsetFactory = Callable[[Workspace], Iterable[Tool]]


@dataclass(frozen=True, kw_only=True)
class ToolListing:
    """The agent's tools now, and which of them the model sees only once it looks for them."""

    tools: list[Tool]
    found: frozenset[str]
    """Found through `tool_search` (or called by name): listed for the rest of the conversation."""
    waiting: frozenset[str]
    """Listed only once `tool_search` finds them."""


@dataclass(frozen=True, kw_only=True)
class ToolSources:
    """Where a conversation's tools come from, and the user's name filters over them."""

    factories: list[ToolsetFactory]
    user_tools: Iterable[Tool]
    mcp: McpServers
    available: list[str] | None
    excluded: list[str]
    found: set[str]
    """Shared with the conversation: what `tool_search` finds outlives the turn."""
    resolve: Callable[[str], Model]
    """How a subagent's own model (`model:` in its definition) is built."""


def assemble(
    sources: ToolSources,
    workspace: Workspace,
    *,
    model: Model | None = None,
    agent: Any = None,
) -> DeferredToolSet:
    """Built-ins (with the model family's own, e.g. the codex line's `apply_patch`, and
    `load_skill` while there are skills), then the user's tools and the MCP servers'
    (deferred when many), all through the name filters.

    The filters apply before the deferral, so `tool_search` never finds an excluded tool and
    only allowed tools count towards the deferral threshold. An MCP tool whose name is taken
    (by a built-in or a tool of the user's) is left out, and `%copilot mcp` says so, unless
    its server's config lists it under `override`. With `agent` (an `Agent`), its `delegate`
    and `ask_user`: subagents and questions run under its run."""
    family = family_of(model) if model is not None else family_for("")
    core = ToolSet()
    for factory in [*sources.factories, family.own_tools, skill_tools]:
        for item in factory(workspace):
            core.add(item)
    if agent is not None:
        core.add(delegate_tool(agent, resolve=sources.resolve))
        core.add(ask_user_tool(agent))
    extra = ToolSet()
    for item in sources.user_tools:
        if item.name in core and not item.override:
            raise ConfigError(
                f"tool {item.name!r} has the name of a built-in tool; rename it, "
                "or create it with tool(..., override=True) to replace the built-in"
            )
        if item.name in core:
            core.add(item, override=True)
        elif item.name not in extra:
            extra.add(item)
    for item in sources.mcp.tools(taken={*(t.name for t in core), *(t.name for t in extra)}):
        (core if item.name in core else extra).add(item, override=item.override)
    return DeferredToolSet(
        _allowed(core, sources),
        _allowed(extra, sources),
        threshold=family.defer_threshold,
        enabled=sources.found,
    )


def listing(catalogue: DeferredToolSet, found: set[str]) -> ToolListing:
    """What `%copilot tools` shows: every tool, and which wait for `tool_search`."""
    later = {t.name for t in catalogue.waiting}
    seen = frozenset(later & found)
    return ToolListing(tools=list(catalogue), found=seen, waiting=frozenset(later - seen))


def namespace_tools(namespace: Mapping[str, Any]) -> list[Tool]:
    """Tools the user defined in the kernel (`@copilot_nb.tool` objects in the namespace)."""
    return [
        value
        for name, value in list(namespace.items())
        if isinstance(value, Tool) and not name.startswith("_")
    ]


def _allowed(tools: ToolSet, sources: ToolSources) -> ToolSet:
    return ToolSet(FilteredToolSet(tools, available=sources.available, excluded=sources.excluded))
