"""The kernel's one conversation, shared by `%%copilot` cells and the chat panel.

It owns what outlives a single request: the agent (and so the history), the models already
built, the approval policy, the tools the user registered in the kernel and the tools the model
found through `tool_search`. `turn()` is the one path a request takes from every surface: the
surfaces only render its events and answer approvals through their `Approver`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Union

from ..config import DEFAULT_MAX_ROUNDS, DEFAULT_TOOL_TIMEOUT
from ..errors import ConfigError
from ..events import (
    AgentEvent,
    ApprovalNeeded,
    CellChanged,
    Done,
    Failed,
    FileChanged,
    ToolsUpdated,
)
from ..models.base import Model
from ..models.cassettes.cassette import (
    Cassette,
    CassetteMismatch,
    Header,
    Mode,
    activate,
    active_cassette,
    default_path,
)
from ..models.transport import follow_cassette
from ..tools import Tool, ToolSet, workspace_tools
from ..tools.context import LiveNotebooks
from ..tools.kernel_toolsets import kernel_toolsets
from ..tools.mcp.servers import McpServers
from ..tools.wrappers import DeferredToolSet, FilteredToolSet
from ..workspace.notebook_file import current_notebook_path
from ..workspace.workspace import Workspace
from .approvals import ApprovalPolicy
from .approver import UNANSWERED, UNATTENDED, Approver
from .ask_user import ask_user_tool
from .cassette_approvals import CassetteApprover
from .conversations.keeper import Keeper
from .families import family_for, family_of
from .loop import BUSY, Agent
from .model_strings import default_model_spec, resolve_model
from .modes import TurnMode, run_in_mode, tools_for_mode
from .prompt_assembly import prepare
from .references import attach_references
from .review_mode import FALLBACK_NOTE, edit_setting, fallback_said, list_file, resolved
from .subagents import delegate_tool

ToolsetFactory = Callable[[Workspace], Iterable[Tool]]


@dataclass(frozen=True, kw_only=True)
class TurnNote:
    """Our own note about this turn (the model is the offline demo): one line of Markdown."""

    text: str


TurnEvent = Union[AgentEvent, TurnNote]
"""What `CopilotSession.turn()` yields: the agent's events, and notes of the session's own."""


@dataclass(frozen=True, kw_only=True)
class ToolListing:
    """The agent's tools now, and which of them the model sees only once it looks for them."""

    tools: list[Tool]
    found: frozenset[str]
    """Found through `tool_search` (or called by name): listed for the rest of the conversation."""
    waiting: frozenset[str]
    """Listed only once `tool_search` finds them."""


def current_dir() -> Path:
    """The kernel's working directory, symlinks resolved: where a turn's workspace is."""
    return Path(os.path.realpath(os.getcwd()))


class CopilotSession:
    """State shared by every surface in one kernel; surfaces read settings, never reach deeper.

    The settings (`model_spec`, `max_rounds`, `tool_timeout`, `approvals`, `available`,
    `excluded`) have one writer: in a kernel, the `CopilotMagics` traits.
    """

    def __init__(
        self, shell: Any = None, *, resolve: Callable[[str], Model] = resolve_model
    ) -> None:
        self.shell = shell
        self.agent: Agent | None = None
        self._workspace: Workspace | None = None
        """The last conversation's workspace: its checkpoints outlive a reset."""
        self.model_spec = ""
        self.max_rounds = DEFAULT_MAX_ROUNDS
        self.mode: TurnMode = "agent"
        """How far a turn goes unless it says otherwise: ask, plan or agent."""
        self.tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT
        self.approvals = ApprovalPolicy()
        self.user_tools = ToolSet()
        self.available: list[str] | None = None
        self.excluded: list[str] = []
        self.cassette_mode: Mode | None = None
        """Record or replay every turn with the cassette beside the notebook (COPILOT_NB_CASSETTE)."""
        self.live: LiveNotebooks | None = None
        """The notebooks open in this kernel's front ends (set by the Jupyter surface)."""
        self.toolset_factories: list[ToolsetFactory] = [workspace_tools]
        if shell is not None:  # the notebook it serves and its live namespace
            self.toolset_factories.append(
                lambda ws: chain(
                    *kernel_toolsets(
                        shell,
                        ws,
                        live=self.live,
                        model_name=self.model_name,
                        model_provider=self.model_provider,
                    )
                )
            )
        self.mcp = McpServers()
        """The workspace's MCP servers: configured from its files, started by the first turn."""
        self._stopping: Any = None
        self.found_tools: set[str] = set()
        """Tools the model found through `tool_search`: kept listed until the conversation ends."""
        self._resolve = resolve
        self._models: dict[str, Model] = {}
        self._turning = False
        self.saved = Keeper(getattr(shell, "user_ns", None), enabled=shell is not None)
        """The conversation as saved beside the notebook (`agent/conversations/`)."""
        self.turn_mode: TurnMode = "agent"
        """The mode of the run under way (a plan turn becomes an agent turn once approved)."""
        self._review_fallback_said = False

    # --- models -----------------------------------------------------------------------------

    def model_name(self) -> str:
        """The model of the conversation now (recorded in the cells it changes), or ""."""
        return self.agent.model.name if self.agent is not None else ""

    def model_provider(self) -> str:
        """The provider of the conversation's model now (`openai`, `copilot`, …), or ""."""
        return str(getattr(self.agent.model, "provider", "")) if self.agent is not None else ""

    def current_model_spec(self, override: str | None = None) -> str:
        return override or self.model_spec or default_model_spec()

    def model(self, spec: str | None = None) -> Model:
        """The model for a spec (built once, then reused: it may own a connection pool)."""
        spec = self.current_model_spec(spec)
        if spec not in self._models:
            self._models[spec] = model = self._resolve(spec)
            follow_cassette(model)
        return self._models[spec]

    def forget_models(self, prefix: str) -> None:
        """Drop built models whose spec starts with `prefix` (e.g. after signing in again)."""
        self._models = {k: m for k, m in self._models.items() if not k.startswith(prefix)}

    # --- one request ------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a turn of this conversation runs (a cell, the chat panel, or a script
        running the session's agent itself)."""
        return self._turning or (self.agent is not None and self.agent.running)

    def turn(
        self,
        prompt: str,
        *,
        approver: Approver | None,
        model: str | None = None,
        approvals: ApprovalPolicy | None = None,
        max_rounds: int | None = None,
        new: bool = False,
        mode: TurnMode | None = None,
    ) -> AsyncGenerator[TurnEvent, None]:
        """One request on the shared conversation: the events to render, approvals to `approver`.

        An unknown model raises ConfigError here, before anything is shown. The events follow
        (a `TurnNote` first for the offline demo model); each `ApprovalNeeded` goes to
        `approver` once the surface has shown it (`None`: nobody answers, each is denied); the turn ends with the agent's `Done` or
        `Failed`. `model`, `approvals`, `max_rounds` and `mode` hold for this turn only; `new`
        forgets the conversation first. Cancelling the consumer stops the agent, and any request still
        unanswered is denied.
        """
        chosen = self.model(model)
        return self._turn(
            prompt, chosen, approver or UNATTENDED, approvals, max_rounds, new, mode or self.mode
        )

    async def _turn(
        self,
        prompt: str,
        model: Model,
        approver: Approver,
        approvals: ApprovalPolicy | None,
        max_rounds: int | None,
        new: bool,
        mode: TurnMode = "agent",
    ) -> AsyncGenerator[TurnEvent, None]:
        if self.busy:  # checked and set with no await between: one turn at a time
            yield Failed(error=BUSY)
            return
        self._turning = True
        asked: list[ApprovalNeeded] = []
        try:
            cassette = self.cassette()
        except CassetteMismatch as exc:
            self._turning = False
            yield Failed(error=str(exc))
            return
        asker = approver  # a workspace's MCP server is asked about by a person, never a replay
        if cassette is not None:
            cassette.mark()
            approver = CassetteApprover(approver, cassette)
        try:
            if new:
                self.reset()
            self.mcp.configure(current_dir())
            external = (approvals or self.approvals).external
            async with aclosing(self.mcp.launches(external, asker.answer)) as questions:
                async for question in questions:  # a workspace's servers, before they start
                    yield question
            await self.mcp.start()
            agent = self.agent_for(model)
            try:
                prompt = await attach_references(prompt, agent.workspace, agent.tools)
            except ConfigError as exc:  # before anything is sent
                yield Failed(error=str(exc))
                return
            if getattr(model, "offline", False):
                from ..testing.offline import OFFLINE_NOTE

                yield TurnNote(text=OFFLINE_NOTE)
            enter = self._enter_mode(agent)
            self.mcp.asker = agent  # a server's question goes out through the running call
            standing = approvals or self.approvals
            if self.live is not None and edit_setting(standing) == "review":
                await self.live.attach_soon()  # "Run All": the page may attach a moment later
            approvals, reviewing = resolved(standing, self.live)
            if self.live is not None:
                self.live.review.begin(reviewing)
            if not self._review_fallback_said and fallback_said(standing, self.live, self.shell):
                self._review_fallback_said = True  # once per kernel: it holds until one attaches
                yield TurnNote(text=FALLBACK_NOTE)
            run = run_in_mode(
                agent, prompt, mode, enter, max_rounds=max_rounds, approvals=approvals
            )
            saving = self.saved.begin(agent, prompt, cassette=cassette is not None)
            async with aclosing(run) as events:
                async for event in events:
                    self.saved.observe(agent, event)
                    if saving is not None and (notice := self.saved.notice()) is not None:
                        yield notice
                    if isinstance(event, ApprovalNeeded):
                        asked.append(event)
                    yield event
                    if isinstance(event, ApprovalNeeded):
                        approver.answer(event)  # once the surface has shown the question
                    elif isinstance(event, (FileChanged, CellChanged)) and reviewing:
                        await list_file(self.live, self.shell, agent.workspace, event)
                    elif isinstance(event, (Done, Failed)):
                        return
        finally:
            if self.live is not None:
                self.live.review.end()
            self.mcp.asker = None
            if self.agent is not None:
                self.saved.end(self.agent)
            self._turning = False
            self.turn_mode = "agent"
            for request in asked:
                if not request.answered:
                    request.deny(UNANSWERED)

    def cassette(self) -> Cassette | None:
        """The cassette this turn records to or replays from: the active one, else the one beside
        the notebook when `cassette_mode` (`COPILOT_NB_CASSETTE`) says to use one."""
        cassette = active_cassette()
        if cassette is not None or not self.cassette_mode:
            return cassette
        notebook = current_notebook_path(getattr(self.shell, "user_ns", None) or {})
        if notebook is None:
            return None
        header = Header(model=self.current_model_spec())
        cassette = Cassette(
            default_path(os.path.abspath(notebook)), self.cassette_mode, header=header
        )
        activate(cassette)
        return cassette

    # --- the conversation -------------------------------------------------------------------

    def agent_for(self, model: Model, *, new: bool = False) -> Agent:
        """The shared agent, moved to the kernel's current directory and this model."""
        if new:
            self.reset()
        cwd = os.path.realpath(os.getcwd())
        if self.agent is None:
            workspace = self.workspace()
            if str(workspace.root) != cwd:
                workspace = Workspace(cwd)
            self.agent = Agent(
                model=model,
                workspace=workspace,
                tools=self.tools_for(workspace),
                max_rounds=self.max_rounds,
                tool_timeout=self.tool_timeout,
            )
            self.saved.seed(self.agent)
        elif str(self.agent.workspace.root) != cwd:
            self.agent.workspace = Workspace(cwd)
        self.agent.tools = self.tools_for(self.agent.workspace, agent=self.agent)
        self.agent.tool_updates = self._tool_updates
        prepare(self.agent, self.shell, self.live)
        self.agent.model = model
        self.agent.approvals = self.approvals  # the standing policy; a turn's own is per run
        self.agent.max_rounds = self.max_rounds
        self.agent.tool_timeout = self.tool_timeout
        return self.agent

    def _enter_mode(self, agent: Agent) -> Callable[[TurnMode], None]:
        """How a turn switches its agent to a mode: the tools the mode offers (for the model's
        family), and the mode's instructions."""

        def enter(mode: TurnMode) -> None:
            self.turn_mode = mode
            agent.tools = tools_for_mode(self.tools_for(agent.workspace, agent=agent), mode)
            prepare(agent, self.shell, self.live, mode=mode)

        return enter

    def reset(self) -> None:
        """Forget the conversation and the tools found in it (`--new`, `reset`, New chat); the
        workspace and its checkpoints stay, so `%copilot undo` still reaches earlier changes."""
        if self.agent is not None:
            self._workspace = self.agent.workspace
        self.agent = None
        self.found_tools = set()
        self.saved.reset()

    def workspace(self) -> Workspace:
        """The conversation's workspace (where its checkpoints are), else the last one in the
        current directory, else a new one there."""
        if self.agent is not None:
            return self.agent.workspace
        cwd = os.path.realpath(os.getcwd())
        if self._workspace is None or str(self._workspace.root) != cwd:
            self._workspace = Workspace(cwd)
        return self._workspace

    # --- tools ------------------------------------------------------------------------------

    def tools_for(self, workspace: Workspace, agent: Agent | None = None) -> DeferredToolSet:
        """Built-ins (with the model family's own, e.g. the codex line's `apply_patch`), then the
        user's tools and the MCP servers' (deferred when many), all through the name filters.

        The filters apply before the deferral, so `tool_search` never finds an excluded tool and
        only allowed tools count towards the deferral threshold. An MCP tool whose name is taken
        (by a built-in or a tool of the user's) is left out, and `%copilot mcp` says so, unless
        its server's config lists it under `override`."""
        model = agent.model if agent is not None else self.agent.model if self.agent else None
        family = family_of(model) if model is not None else family_for("")
        core = ToolSet()
        for factory in [*self.toolset_factories, family.own_tools]:
            for item in factory(workspace):
                core.add(item)
        if agent is not None:  # subagents and questions run under this agent's run
            core.add(delegate_tool(agent, resolve=self.model))
            core.add(ask_user_tool(agent))
        extra = ToolSet()
        for item in [*self.user_tools, *self.namespace_tools()]:
            if item.name in core and not item.override:
                raise ConfigError(
                    f"tool {item.name!r} has the name of a built-in tool; rename it, "
                    "or create it with tool(..., override=True) to replace the built-in"
                )
            if item.name in core:
                core.add(item, override=True)
            elif item.name not in extra:
                extra.add(item)
        for item in self.mcp.tools(taken={*(t.name for t in core), *(t.name for t in extra)}):
            (core if item.name in core else extra).add(item, override=item.override)
        return DeferredToolSet(  # shared: what tool_search finds outlives the turn
            self._allowed(core),
            self._allowed(extra),
            threshold=family.defer_threshold,
            enabled=self.found_tools,
        )

    def stop_servers(self) -> None:
        """Stop the MCP servers (`%unload_ext`): at once when no loop runs, else as a task on
        the kernel's loop, which finishes while the kernel is idle."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.mcp.stop())
            return
        self._stopping = loop.create_task(self.mcp.stop())

    async def _tool_updates(self) -> list[ToolsUpdated]:
        """Before each model request: MCP tool lists that changed, with the agent's tool set
        rebuilt, so the request offers them (also in the middle of a turn)."""
        await self.mcp.settled()
        updates = self.mcp.take_updates()
        if updates and self.agent is not None:
            tools = self.tools_for(self.agent.workspace, agent=self.agent)
            self.agent.tools = tools_for_mode(tools, self.turn_mode)
        return updates

    def _allowed(self, tools: ToolSet) -> ToolSet:
        return ToolSet(FilteredToolSet(tools, available=self.available, excluded=self.excluded))

    def tool_listing(self, workspace: Workspace) -> ToolListing:
        """What `%copilot tools` shows: every tool, and which wait for `tool_search`."""
        catalogue = self.tools_for(workspace)
        later = {t.name for t in catalogue.extra} if catalogue.deferring else set()
        found = frozenset(later & self.found_tools)
        return ToolListing(tools=list(catalogue), found=found, waiting=frozenset(later - found))

    def namespace_tools(self) -> list[Tool]:
        """Tools the user defined in the kernel (`@copilot_nb.tool` objects in the namespace)."""
        namespace = getattr(self.shell, "user_ns", None) or {}
        return [
            value
            for name, value in list(namespace.items())
            if isinstance(value, Tool) and not name.startswith("_")
        ]

    def add_tool(self, item: Tool) -> None:
        """Register a tool for this kernel's agent (`%copilot tools add NAME`)."""
        self.user_tools.add(item, override=True)

    def remove_tool(self, name: str) -> bool:
        """Forget a tool added with `add_tool`; False if there was none."""
        if name not in self.user_tools:
            return False
        self.user_tools = ToolSet(t for t in self.user_tools if t.name != name)
        return True
