"""What one run of an `Agent` uses, handed to `Agent.run(prompt, settings=...)` as one object.

An agent keeps its conversation; what a run uses (the model, the tools, the approvals, its hooks)
comes with the run, as openai-agents hands a `RunConfig` to a run and pydantic-ai takes its
settings in `Agent.run`. So a session that serves many turns never writes the attributes of its
long-lived agent: it builds one `RunSettings` per turn. Settings come in layers, resolved field
by field as openai-agents' `ModelSettings.resolve` does: the agent's own, then the turn's stages
in order, then the run's own arguments; a field a layer leaves out is the layer below's. The
agent's own layer sets every field, so what `Agent.active` reports is complete.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Final

from ...errors import ConfigError
from ...events import ToolsUpdated
from ...messages import Message
from ...models.base import Model
from ...tools.toolset import ToolSource
from ..approvals.policy import ApprovalPolicy


class _Unset:
    def __repr__(self) -> str:
        return "<the layer below's>"


UNSET: Final[Any] = _Unset()
"""A field a layer leaves out: the layer below's. `None` is a value (no time limit, no hook),
except in the fields no run goes without (the model, tools, approvals, rounds, instructions),
where it is left out too."""


@dataclass(frozen=True, kw_only=True)
class ToolChanges:
    """What a run's `tool_updates` hook found before a model request: the changes to show, and
    the tool set to offer from this request on (None: the run's set stays as it is)."""

    updates: tuple[ToolsUpdated, ...] = ()
    tools: ToolSource | None = None


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """One layer of a run's settings; a field left out is the layer below's."""

    model: Model = UNSET
    tools: ToolSource = UNSET
    approvals: ApprovalPolicy = UNSET
    """Decides this run's calls (a `--yes` cell); subagents follow it."""
    max_rounds: int = UNSET
    tool_timeout: float | None = UNSET
    """Seconds one tool call may run (None: no limit)."""
    system_prompt: str = UNSET
    """The instructions of this run (an instruction file changed): the history's first message
    becomes this text."""
    context_block: Callable[[], Awaitable[str]] | None = UNSET
    """Built at the start of the run: what the model should know about the notebook and the
    project (`tools/context_block.py`); sent with the run's request, never kept in the history."""
    on_message: Callable[[Message], None] | None = UNSET
    """Told of each message as the run adds it (the saved conversation writes it down as it
    happens); compaction's rewrites are not additions."""
    tool_updates: Callable[[], Awaitable[ToolChanges]] | None = UNSET
    """Asked before each model request: how the tool set changed (an MCP server's tools)."""
    request_options: Mapping[str, Any] = UNSET
    """Extra request fields for every model call of the run (temperature, tool_choice, ...);
    merged key by key across layers."""
    turn_label: str | None = UNSET
    """What `%copilot diff` and `undo` call the run's changes (None: its request): an approved
    plan's run is the user's request, not the instruction that carries the plan out."""

    def __post_init__(self) -> None:
        timeout = self.tool_timeout
        if timeout is not UNSET and timeout is not None and not timeout > 0:
            raise ConfigError(
                f"tool_timeout must be more than 0 seconds, or None for no limit; not {timeout!r}"
            )

    def resolve(self, *layers: RunSettings | None) -> RunSettings:
        """These settings with `layers` over them in order: each field a layer sets wins."""
        resolved = self
        for layer in layers:
            if layer is not None:
                resolved = replace(resolved, **resolved._changes(layer))
        return resolved

    def _changes(self, layer: RunSettings) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        for name in _NAMES:
            value = getattr(layer, name)
            if value is UNSET or (value is None and name in _NEEDED):
                continue
            below = getattr(self, name)
            if name == "request_options" and below is not UNSET:
                value = {**below, **value}
            changes[name] = value
        return changes


_NAMES: Final = tuple(f.name for f in fields(RunSettings))
_NEEDED: Final = frozenset({"model", "tools", "approvals", "max_rounds", "system_prompt"})
