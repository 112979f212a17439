"""The kernel's one conversation, shared by `%%copilot` cells and the chat panel.

It owns what outlives a single request: the agent (and so the history), the models already
built, the approval policy, and the tools the user registered in the kernel.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from ..errors import ConfigError
from ..models.base import Model
from ..tools import Tool, ToolSet, workspace_tools
from ..tools.kernel_toolsets import kernel_toolsets
from ..tools.registry import DEFAULT_TOOL_TIMEOUT
from ..tools.wrappers import DeferredToolSet, FilteredToolSet
from ..workspace.workspace import Workspace
from .approvals import ApprovalPolicy
from .loop import DEFAULT_MAX_ROUNDS, Agent
from .model_strings import default_model_spec, resolve_model

ToolsetFactory = Callable[[Workspace], Iterable[Tool]]


class CopilotSession:
    """State shared by every surface in one kernel; surfaces read settings, never reach deeper."""

    def __init__(self, shell: Any = None) -> None:
        self.shell = shell
        self.agent: Agent | None = None
        self.model_spec = ""
        self.max_rounds = DEFAULT_MAX_ROUNDS
        self.tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT
        self.approvals = ApprovalPolicy()
        self.user_tools = ToolSet()
        self.available: list[str] | None = None
        self.excluded: list[str] = []
        self.toolset_factories: list[ToolsetFactory] = [workspace_tools]
        if shell is not None:  # the notebook it serves and its live namespace
            self.toolset_factories.append(lambda ws: chain(*kernel_toolsets(shell, ws)))
        self._models: dict[str, Model] = {}

    # --- models -----------------------------------------------------------------------------

    def current_model_spec(self, override: str | None = None) -> str:
        return override or self.model_spec or default_model_spec()

    def model(self, spec: str | None = None) -> Model:
        """The model for a spec (built once, then reused: it may own a connection pool)."""
        spec = self.current_model_spec(spec)
        if spec not in self._models:
            self._models[spec] = resolve_model(spec)
        return self._models[spec]

    # --- the conversation -------------------------------------------------------------------

    def agent_for(self, model: Model, *, new: bool = False) -> Agent:
        """The shared agent, moved to the kernel's current directory and this model."""
        cwd = os.path.realpath(os.getcwd())
        if self.agent is None or new:
            workspace = Workspace(cwd)
            self.agent = Agent(
                model=model,
                workspace=workspace,
                tools=self.tools_for(workspace),
                max_rounds=self.max_rounds,
                tool_timeout=self.tool_timeout,
            )
        elif str(self.agent.workspace.root) != cwd:
            self.agent.workspace = Workspace(cwd)
        self.agent.tools = self.tools_for(self.agent.workspace)
        self.agent.model = model
        self.agent.max_rounds = self.max_rounds
        self.agent.tool_timeout = self.tool_timeout
        return self.agent

    def reset(self) -> None:
        self.agent = None

    # --- tools ------------------------------------------------------------------------------

    def tools_for(self, workspace: Workspace) -> FilteredToolSet:
        """Built-ins, then the user's tools (deferred when many), then the name filters."""
        core = ToolSet()
        for factory in self.toolset_factories:
            for item in factory(workspace):
                core.add(item)
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
        return FilteredToolSet(
            DeferredToolSet(core, extra),
            available=self.available,
            excluded=self.excluded,
        )

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

    def forget_models(self, prefix: str) -> None:
        """Drop built models whose spec starts with `prefix` (e.g. after signing in again)."""
        self._models = {k: m for k, m in self._models.items() if not k.startswith(prefix)}

    def workspace(self) -> Workspace:
        """The conversation's workspace (where its checkpoints are), else the current directory."""
        return self.agent.workspace if self.agent is not None else Workspace(os.getcwd())
