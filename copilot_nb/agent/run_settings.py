"""What one run of an `Agent` uses, handed to `Agent.run(prompt, settings=...)` as one object.

An agent keeps its conversation; what a run uses (the model, the tools, the approvals, its hooks)
comes with the run, as openai-agents hands a `RunConfig` to a run and pydantic-ai takes its
settings in `Agent.run`. So a session that serves many turns never writes the attributes of its
long-lived agent: it builds one `RunSettings` per turn. A field left `None` is the agent's own
(what it was built with).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, Literal

from ..errors import ConfigError
from ..events import ToolsUpdated
from ..messages import Message
from ..models.base import Model
from ..tools.toolset import ToolSource
from .approvals.policy import ApprovalPolicy


class _Own(Enum):
    OWN = "the agent's own"


OWN: Final = _Own.OWN
"""`RunSettings.tool_timeout` left as the agent's own (`None` there means no limit)."""


@dataclass(frozen=True, kw_only=True)
class ToolChanges:
    """What a run's `tool_updates` hook found before a model request: the changes to show, and
    the tool set to offer from this request on (None: the run's set stays as it is)."""

    updates: tuple[ToolsUpdated, ...] = ()
    tools: ToolSource | None = None


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """One run's settings; `None` (and `OWN`) fields are the agent's own."""

    model: Model | None = None
    tools: ToolSource | None = None
    approvals: ApprovalPolicy | None = None
    """Decides this run's calls (a `--yes` cell); subagents follow it."""
    max_rounds: int | None = None
    tool_timeout: float | Literal[_Own.OWN] | None = OWN
    """Seconds one tool call may run (None: no limit)."""
    system_prompt: str | None = None
    """The instructions of this run (an instruction file changed): the history's first message
    becomes this text."""
    context_block: Callable[[], Awaitable[str]] | None = None
    """Built at the start of the run: what the model should know about the notebook and the
    project (`tools/context_block.py`); sent with the run's request, never kept in the history."""
    on_message: Callable[[Message], None] | None = None
    """Told of each message as the run adds it (the saved conversation writes it down as it
    happens); compaction's rewrites are not additions."""
    tool_updates: Callable[[], Awaitable[ToolChanges]] | None = None
    """Asked before each model request: how the tool set changed (an MCP server's tools)."""
    request_options: Mapping[str, Any] = field(default_factory=dict)
    """Extra request fields for every model call of the run (temperature, tool_choice, ...)."""
    turn_label: str | None = None
    """What `%copilot diff` and `undo` call the run's changes (None: its request): an approved
    plan's run is the user's request, not the instruction that carries the plan out."""

    def __post_init__(self) -> None:
        timeout = self.tool_timeout
        if timeout is not OWN and timeout is not None and not timeout > 0:
            raise ConfigError(
                f"tool_timeout must be more than 0 seconds, or None for no limit; not {timeout!r}"
            )


@dataclass(frozen=True, kw_only=True)
class ActiveRun:
    """The settings of a run with the agent's own filled in: what `Agent.active` reports."""

    model: Model
    tools: ToolSource
    approvals: ApprovalPolicy
    max_rounds: int
    tool_timeout: float | None
    system_prompt: str
    context_block: Callable[[], Awaitable[str]] | None = None
    on_message: Callable[[Message], None] | None = None
    tool_updates: Callable[[], Awaitable[ToolChanges]] | None = None
    request_options: Mapping[str, Any] = field(default_factory=dict)
    turn_label: str | None = None


def resolve(settings: RunSettings, own: ActiveRun) -> ActiveRun:
    """`settings` over the agent's own: each field given wins, the rest stay the agent's."""
    return ActiveRun(
        model=settings.model if settings.model is not None else own.model,
        tools=settings.tools if settings.tools is not None else own.tools,
        approvals=settings.approvals if settings.approvals is not None else own.approvals,
        max_rounds=settings.max_rounds if settings.max_rounds is not None else own.max_rounds,
        tool_timeout=own.tool_timeout if settings.tool_timeout is OWN else settings.tool_timeout,
        system_prompt=settings.system_prompt or own.system_prompt,
        context_block=settings.context_block,
        on_message=settings.on_message,
        tool_updates=settings.tool_updates,
        request_options=settings.request_options,
        turn_label=settings.turn_label,
    )
