"""One turn of a conversation as an ordered list of stages, each saying what it adds.

A stage is a function of the `Turn` as merged so far. It returns an `Adds` (what it adds: run
settings, the request as it goes on, the agent, event hooks, a tear-down), or, when it has
something to show on the way (a question, a note, a `Failed` that ends the turn), it is an async
generator that yields those events and its `Adds`. `run_stages` merges each `Adds` in order into
a new `Turn` (as pydantic-ai's capabilities contribute to a run, and openai-agents' settings
resolve field by field), puts its tear-down on the one exit stack, and passes every event after
it through its hooks. No stage writes into the turn: the stages themselves are in `stages.py`,
and adding a per-turn feature is adding a stage, not a branch in the session.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, Union

from ..events import AgentEvent, Done, Failed
from ..messages import UserMessage
from ..models.base import Model
from ..models.cassettes.cassette import Cassette
from ..tools.context import LiveNotebooks
from ..tools.mcp.servers import McpServers
from ..tools.toolset import ToolSource
from ..workspace.workspace import Workspace
from .approvals.approver import Approver
from .approvals.policy import ApprovalPolicy
from .conversations.keeper import Keeper
from .loop.rounds import Agent
from .loop.run_settings import RunSettings, ToolChanges
from .modes.names import TurnMode


@dataclass(frozen=True, kw_only=True)
class TurnNote:
    """Our own note about this turn (the model is the offline demo): one line of Markdown."""

    text: str


TurnEvent = Union[AgentEvent, TurnNote]
"""What `CopilotSession.turn()` yields: the agent's events, and notes of the session's own."""


class TurnHost(Protocol):
    """What the stages use of the session that runs the turn (`CopilotSession`)."""

    shell: Any
    live: LiveNotebooks | None
    mcp: McpServers
    saved: Keeper
    max_rounds: int
    tool_timeout: float | None
    turning: bool
    review_fallback_said: bool

    @property
    def busy(self) -> bool: ...

    def cassette(self) -> Cassette | None: ...

    def reset(self) -> None: ...

    def agent_for(self, model: Model, *, new: bool = False) -> Agent: ...

    def tools_for(
        self, workspace: Workspace, agent: Agent | None = None, *, model: Model | None = None
    ) -> ToolSource: ...

    async def tool_changes(self, agent: Agent, model: Model, mode: TurnMode) -> ToolChanges: ...


Before = Callable[[AgentEvent], Iterable[TurnEvent]]
"""A hook on each event before it is shown: notes to show first."""
After = Callable[[TurnEvent], Awaitable[None]]
"""A hook on each event once a surface has shown it (notes included)."""


@dataclass(frozen=True, kw_only=True)
class Adds:
    """What one stage adds to its turn; `run_stages` merges each stage's in order."""

    settings: RunSettings | None = None
    """Laid over the run's settings so far, field by field (`RunSettings.resolve`)."""
    prompt: str | None = None
    """The request from here on (references attached, a skill's body added)."""
    agent: Agent | None = None
    cassette: Cassette | None = None
    approver: Approver | None = None
    """Who answers the turn's approvals from here on (a replay's answers before the surface's)."""
    before: Before | None = None
    after: After | None = None
    exit: Callable[[], object] | None = None
    """The stage's tear-down, run when the turn ends however it ends, the last stage's first."""


NOTHING = Adds()
"""What a stage adds that only acted (or had nothing to do this turn)."""


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One turn: what was asked, and what the stages entered so far have added."""

    prompt: str | UserMessage
    """The request (a proxy client's comes with its images)."""
    model: Model
    approver: Approver
    """Who answers the turn's approvals (a replayed cassette's answers wrap the surface's)."""
    asker: Approver
    """Who answers for a workspace's MCP server: the surface itself, never a replay."""
    host: TurnHost | None = None
    """The session whose conversation this is; None for the proxy's server-side runs."""
    standing: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    """The turn's approval policy as asked (the session's, or the turn's own `--yes`)."""
    mode: TurnMode = "agent"
    new: bool = False
    max_rounds: int | None = None
    """The turn's own limit (`--max-rounds`); None: the session's."""
    skills: tuple[str, ...] = ()
    """Skills loaded into the request up front (`%%copilot --skill NAME`)."""
    cassette: Cassette | None = None
    agent: Agent | None = None
    settings: RunSettings = field(default_factory=RunSettings)
    """What the agent's run uses, as the stages so far have added it."""

    def the_agent(self) -> Agent:
        """The conversation's agent, once the agent stage has added it."""
        if self.agent is None:
            raise RuntimeError("a stage needs the agent before the agent stage ran")
        return self.agent

    def the_host(self) -> TurnHost:
        """The session, for the stages of a session's turn."""
        if self.host is None:
            raise RuntimeError("a session's stage was given a turn with no session")
        return self.host

    def text(self) -> str:
        """The request's words."""
        return self.prompt if isinstance(self.prompt, str) else self.prompt.content

    def merged(self, adds: Adds) -> Turn:
        """This turn with what one stage adds."""
        changes: dict[str, Any] = {
            name: value
            for name in ("prompt", "agent", "cassette", "approver")
            if (value := getattr(adds, name)) is not None
        }
        if adds.settings is not None:
            changes["settings"] = self.settings.resolve(adds.settings)
        return replace(self, **changes) if changes else self


Stage = Callable[[Turn], Union[Adds, AsyncGenerator[Union[TurnEvent, Adds], None]]]
"""One part of a turn: what it adds, or the events it shows on the way and what it adds."""


async def run_stages(turn: Turn, stages: Sequence[Stage]) -> AsyncGenerator[TurnEvent, None]:
    """Enter each stage in order, merging what it adds; every event after a stage's hooks were
    added goes through them. A `Done` or `Failed` ends the turn, and every stage entered so far
    tears down, last first."""
    before: list[Before] = []
    after: list[After] = []
    async with AsyncExitStack() as stack:

        def merge(adds: Adds) -> None:
            nonlocal turn
            turn = turn.merged(adds)
            if adds.before is not None:
                before.append(adds.before)
            if adds.after is not None:
                after.append(adds.after)
            if adds.exit is not None:
                stack.callback(adds.exit)

        for stage in stages:
            entered = stage(turn)
            if isinstance(entered, Adds):
                merge(entered)
                continue
            async with aclosing(entered) as events:
                async for event in events:
                    if isinstance(event, Adds):
                        merge(event)
                        continue
                    for shown in _with_notes(event, before):
                        yield shown
                        for hook in after:
                            await hook(shown)
                    if isinstance(event, (Done, Failed)):
                        return


def _with_notes(event: TurnEvent, before: list[Before]) -> Iterable[TurnEvent]:
    """The notes the hooks have about an agent's event, then the event."""
    if not before or isinstance(event, TurnNote):
        return (event,)
    return (*(note for hook in before for note in hook(event)), event)


def current_dir() -> Path:
    """The kernel's working directory, symlinks resolved: where a turn's workspace is."""
    return Path(os.path.realpath(os.getcwd()))
