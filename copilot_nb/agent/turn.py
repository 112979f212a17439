"""One turn of the kernel's conversation as an ordered list of stages in one `AsyncExitStack`.

A stage is an async generator over the `Turn` under way: it sets up its part (may show events
on the way: a question, a note, a `Failed` that ends the turn), puts its tear-down on the turn's
exit stack, adds its part to the turn's `RunSettings`, and may hook the loop's events (before a
surface shows one, after it has). The stages themselves are in `stages.py`; adding a per-turn
feature is adding a stage, not a branch in the session.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Union

from ..events import AgentEvent, ApprovalNeeded, Done, Failed
from ..models.base import Model
from ..models.cassettes.cassette import Cassette
from ..tools.context import LiveNotebooks
from ..tools.mcp.servers import McpServers
from ..tools.toolset import ToolSource
from ..workspace.workspace import Workspace
from .approvals.approver import UNANSWERED, Approver
from .approvals.policy import ApprovalPolicy
from .conversations.keeper import Keeper
from .loop import Agent
from .modes.names import TurnMode
from .run_settings import RunSettings, ToolChanges


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
    turn_mode: TurnMode
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
"""A hook on each event of the loop before it is shown: notes to show first."""
After = Callable[[AgentEvent], Awaitable[None]]
"""A hook on each event of the loop once a surface has shown it."""


@dataclass(kw_only=True, eq=False)
class Turn:
    """One turn under way: what was asked, and what its stages have set up so far."""

    host: TurnHost
    prompt: str
    model: Model
    approver: Approver
    """Who answers the turn's approvals (a replayed cassette's answers wrap the surface's)."""
    asker: Approver
    """Who answers for a workspace's MCP server: the surface itself, never a replay."""
    standing: ApprovalPolicy
    """The turn's approval policy as asked (the session's, or the turn's own `--yes`)."""
    mode: TurnMode
    new: bool = False
    skills: tuple[str, ...] = ()
    """Skills loaded into the request up front (`%%copilot --skill NAME`)."""
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    cassette: Cassette | None = None
    agent: Agent | None = None
    settings: RunSettings = field(default_factory=RunSettings)
    """What the agent's run uses, built up stage by stage; immutable, replaced as it grows."""
    before: list[Before] = field(default_factory=list)
    after: list[After] = field(default_factory=list)
    asked: list[ApprovalNeeded] = field(default_factory=list)

    def the_agent(self) -> Agent:
        """The conversation's agent, once the conversation stage has set it."""
        if self.agent is None:
            raise RuntimeError("a stage needs the agent before the conversation stage ran")
        return self.agent

    def deny_unanswered(self) -> None:
        """Every question the turn asked and nobody answered is denied when it ends."""
        for request in self.asked:
            if not request.answered:
                request.deny(UNANSWERED)


Stage = Callable[[Turn], AsyncGenerator[TurnEvent, None]]


async def run_stages(turn: Turn, stages: Sequence[Stage]) -> AsyncGenerator[TurnEvent, None]:
    """Enter each stage in order in the turn's one exit stack; a `Done` or `Failed` ends the
    turn, and every stage entered so far tears down, last first."""
    async with turn.stack:
        for stage in stages:
            async with aclosing(stage(turn)) as events:
                async for event in events:
                    yield event
                    if isinstance(event, (Done, Failed)):
                        return


def current_dir() -> Path:
    """The kernel's working directory, symlinks resolved: where a turn's workspace is."""
    return Path(os.path.realpath(os.getcwd()))
