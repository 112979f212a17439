"""The kernel's one conversation, shared by `%%copilot` cells and the chat panel.

It owns what outlives a single request: the agent (and so the history), the models already
built, the approval policy, the tools the user registered in the kernel and the tools the model
found through `tool_search`. `turn()` is the one path a request takes from every surface: the
surfaces only render its events and answer approvals through their `Approver`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from itertools import chain
from typing import Any

from ..config import DEFAULT_MAX_ROUNDS, DEFAULT_TOOL_TIMEOUT
from ..kernel_bridge import run_blocking, running_loop, user_namespace
from ..models.base import Model
from ..models.cassettes.cassette import (
    Cassette,
    Header,
    Mode,
    activate,
    active_cassette,
    default_path,
)
from ..tools import Tool, ToolSet, workspace_tools
from ..tools.context import LiveNotebooks
from ..tools.kernel.state import kernel_state
from ..tools.kernel_toolsets import kernel_toolsets
from ..tools.mcp.servers import McpServers
from ..tools.wrappers import DeferredToolSet
from ..workspace.notebook_file import current_notebook_path
from ..workspace.workspace import Workspace
from .approvals.approver import UNATTENDED, Approver
from .approvals.policy import ApprovalPolicy
from .conversations.keeper import Keeper
from .loop.rounds import Agent
from .loop.run_settings import ToolChanges
from .model_strings import default_model_spec, resolve_model
from .modes.run import TurnMode, tools_for_mode
from .stages import TURN
from .tool_assembly import (
    ToolListing,
    ToolsetFactory,
    ToolSources,
    assemble,
    listing,
    namespace_tools,
)
from .turn import Stage, Turn, TurnEvent, TurnNote, current_dir, run_stages

__all__ = ["CopilotSession", "ToolListing", "TurnEvent", "TurnNote", "current_dir"]


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
        self.turning = False
        """True while a turn runs (set by its first stage, cleared by its tear-down)."""
        self.saved = Keeper(
            user_namespace(shell),
            enabled=shell is not None,
            kernel=kernel_state(shell) if shell is not None else None,
        )
        """The conversation as saved beside the notebook (`agent/conversations/`)."""
        self.mirrors: weakref.WeakSet[Any] = weakref.WeakSet()
        """The views that show this conversation's turns run elsewhere (an open chat panel
        shows a cell's), held weakly: a view nobody holds any more stops showing them."""
        self.review_fallback_said = False
        """Whether a turn said review fell back to asking (once per kernel)."""

    # --- models -----------------------------------------------------------------------------

    def model_name(self) -> str:
        """The model of the conversation now (recorded in the cells it changes), or ""."""
        return self.agent.active.model.name if self.agent is not None else ""

    def model_provider(self) -> str:
        """The provider of the conversation's model now (`openai`, `copilot`, …), or ""."""
        if self.agent is None:
            return ""
        return self.agent.active.model.provider

    def current_model_spec(self, override: str | None = None) -> str:
        return override or self.model_spec or default_model_spec()

    def model(self, spec: str | None = None) -> Model:
        """The model for a spec (built once, then reused: it may own a connection pool)."""
        spec = self.current_model_spec(spec)
        if spec not in self._models:
            self._models[spec] = model = self._resolve(spec)
            if model.endpoint is not None:  # the kernel's cassette, between turns too (a list)
                model.endpoint.tape = active_cassette
        return self._models[spec]

    def forget_models(self, prefix: str) -> None:
        """Drop built models whose spec starts with `prefix` (e.g. after signing in again)."""
        self._models = {k: m for k, m in self._models.items() if not k.startswith(prefix)}

    # --- one request ------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a turn of this conversation runs (a cell, the chat panel, or a script
        running the session's agent itself)."""
        return self.turning or (self.agent is not None and self.agent.running)

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
        skills: Sequence[str] = (),
        stages: Sequence[Stage] = (),
    ) -> AsyncGenerator[TurnEvent, None]:
        """One request on the shared conversation: the events to render, approvals to `approver`.

        An unknown model raises ConfigError here, before anything is shown. The events follow
        (a `TurnNote` first for the offline demo model); each `ApprovalNeeded` goes to
        `approver` once the surface has shown it (`None`: nobody answers, each is denied); the turn ends with the agent's `Done` or
        `Failed`. `model`, `approvals`, `max_rounds`, `mode` and `skills` (loaded up front)
        hold for this turn only; `new` forgets the conversation first; `stages` are the
        surface's own, entered before the turn's (a cell's turn shown in an open panel too).
        Cancelling the consumer stops the agent, and any request still unanswered is denied.
        """
        chosen = self.model(model)
        approver = approver or UNATTENDED
        turn = Turn(
            host=self,
            prompt=prompt,
            model=chosen,
            approver=approver,
            asker=approver,
            standing=approvals or self.approvals,
            mode=mode or self.mode,
            new=new,
            max_rounds=max_rounds,
            skills=tuple(skills),
        )
        return run_stages(turn, (*stages, *TURN))

    def cassette(self) -> Cassette | None:
        """The cassette this turn records to or replays from: the active one, else the one beside
        the notebook when `cassette_mode` (`COPILOT_NB_CASSETTE`) says to use one."""
        cassette = active_cassette()
        if cassette is not None or not self.cassette_mode:
            return cassette
        notebook = current_notebook_path(user_namespace(self.shell))
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
        """The shared agent in the kernel's current directory (a new one for a new directory
        keeps the conversation); its own settings are for scripts, a turn brings its own."""
        if new:
            self.reset()
        cwd = os.path.realpath(os.getcwd())
        if self.agent is not None and str(self.agent.workspace.root) == cwd:
            return self.agent
        if self.agent is not None:  # moved: the conversation goes on in the new directory
            workspace, history = Workspace(cwd), self.agent.messages[1:]
            context = self.agent.context
        else:
            workspace, history, context = self.workspace(), self.saved.seed(), None
            if str(workspace.root) != cwd:
                workspace = Workspace(cwd)
        self.agent = Agent(
            model=model,
            workspace=workspace,
            tools=self.tools_for(workspace, model=model),
            max_rounds=self.max_rounds,
            approvals=self.approvals,
            tool_timeout=self.tool_timeout,
            context=context,
            history=history,
        )
        return self.agent

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

    def tools_for(
        self, workspace: Workspace, agent: Agent | None = None, *, model: Model | None = None
    ) -> DeferredToolSet:
        """The conversation's tools for `model` (else the agent's), as `tool_assembly` puts
        them together: with `agent`, its `delegate` and `ask_user` too."""
        owner = agent if agent is not None else self.agent
        if model is None and owner is not None:
            model = owner.active.model
        sources = ToolSources(
            factories=self.toolset_factories,
            user_tools=[*self.user_tools, *self.namespace_tools()],
            mcp=self.mcp,
            available=self.available,
            excluded=self.excluded,
            found=self.found_tools,
            resolve=self.model,
        )
        return assemble(sources, workspace, model=model, agent=agent)

    def stop_servers(self) -> None:
        """Stop the MCP servers (`%unload_ext`): at once when no loop runs, else as a task on
        the kernel's loop, which finishes while the kernel is idle."""
        loop = running_loop()
        if loop is None:
            run_blocking(self.mcp.stop())
            return
        self._stopping = loop.create_task(self.mcp.stop())

    async def tool_changes(self, agent: Agent, model: Model, mode: TurnMode) -> ToolChanges:
        """Before each model request: MCP tool lists that changed, with the run's tool set
        rebuilt, so the request offers them (also in the middle of a turn)."""
        await self.mcp.settled()
        updates = self.mcp.take_updates()
        if not updates:
            return ToolChanges()
        tools = tools_for_mode(self.tools_for(agent.workspace, agent, model=model), mode)
        return ToolChanges(updates=tuple(updates), tools=tools)

    def tool_listing(self, workspace: Workspace) -> ToolListing:
        """What `%copilot tools` shows: every tool, and which wait for `tool_search`."""
        return listing(self.tools_for(workspace), self.found_tools)

    def namespace_tools(self) -> list[Tool]:
        """Tools the user defined in the kernel (`@copilot_nb.tool` objects in the namespace)."""
        return namespace_tools(user_namespace(self.shell))

    def add_tool(self, item: Tool) -> None:
        """Register a tool for this kernel's agent (`%copilot tools add NAME`)."""
        self.user_tools.add(item, override=True)

    def remove_tool(self, name: str) -> bool:
        """Forget a tool added with `add_tool`; False if there was none."""
        if name not in self.user_tools:
            return False
        self.user_tools = ToolSet(t for t in self.user_tools if t.name != name)
        return True
