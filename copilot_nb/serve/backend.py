"""What the proxy serves, whoever started it: models by name, the server's own tools, and who
approves a call that asks.

`%copilot serve` builds one over the kernel's session (its model, its whole tool set, its
approval policy, buttons in the notebook); `copilot-nb serve` builds one over a workspace
folder (its file and search tools; nobody to ask, so what asks is denied).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agent.approvals.approver import Approver
from ..agent.approvals.policy import ApprovalPolicy, answer_of, policy_refusal, rule_on
from ..agent.skills.scripts import note_result
from ..events import ApprovalNeeded
from ..models.base import Model
from ..text import first_line
from ..tools.registry import ToolOutput
from ..tools.toolset import ToolSource
from ..workspace.workspace import Workspace
from .http.surface import NOTEBOOK, Surface

NOBODY = "denied: nobody can approve it here (the proxy was started without a notebook to ask in)"


@dataclass(kw_only=True)
class Backend:
    """The proxy's view of the world; every field is read when a request needs it."""

    model_names: Callable[[], list[str]]
    """The names a client may ask for (`GET /v1/models`), the default first."""
    resolve: Callable[[str], Model]
    """A listed name to its model (built once and reused by the caller's own cache)."""
    tools: Callable[[], ToolSource]
    """The server's own tools, assembled now (MCP servers and kernel tools change)."""
    workspace: Callable[[], Workspace]
    """Where server-side runs work (their checkpoints go there, as a cell's do)."""
    approvals: Callable[[], ApprovalPolicy] = ApprovalPolicy
    approver: Approver | None = None
    """Who is asked when a call asks; None: such a call is denied."""
    allow_execution: bool = False
    """Whether clients may ask the server to run tools itself (`tool_execution: "auto"`, `/mcp`)."""
    tool_timeout: float | None = 120.0
    surface: Surface = NOTEBOOK
    """Who started the server (a notebook, a shell): refusals name the command they can run."""
    _models: dict[str, Model] = field(default_factory=dict)

    @property
    def unapproved(self) -> str:
        """The refusal of a call that asks when nobody can answer, with the surface's remedy."""
        return f"{NOBODY}; {self.surface.unapproved}"

    def model(self, name: str) -> Model:
        if name not in self._models:
            self._models[name] = self.resolve(name)
        return self._models[name]

    async def run_tool(self, name: str, arguments: Any, *, summary: str = "") -> ToolOutput:
        """One call from a client, through the same approval as the agent's own calls."""
        source = self.tools()
        tool = source.get(name)
        ruling = await rule_on(self.approvals(), name, tool, arguments)
        category, decision = ruling.category, ruling.decision
        refusal = ""
        if decision == "deny":
            refusal = policy_refusal(name, category)
        elif decision == "ask":
            refusal = await self._ask(name, arguments, category, summary, tool, ruling.note)
        if refusal:
            return ToolOutput(content=refusal, is_error=True, summary="denied")
        output = await source.call_tool(name, arguments, timeout=self.tool_timeout)
        note_result(arguments, output.content)
        return output

    async def _ask(
        self,
        name: str,
        arguments: Mapping[str, Any],
        category: str,
        summary: str,
        tool: Any,
        note: str = "",
    ) -> str:
        """Ask the approver (buttons in the notebook that started the proxy); '' if approved."""
        if self.approver is None:
            return f"{name}: {self.unapproved}"
        trust = getattr(tool, "trust", None)
        request = ApprovalNeeded(
            call_id=f"proxy-{uuid.uuid4().hex[:12]}",
            name=name,
            arguments=dict(arguments),
            summary=summary or first_line(str(dict(arguments)), 80),
            category=category,
            decision=asyncio.get_running_loop().create_future(),
            note=note or (trust.note if trust is not None else ""),
        )
        self.approver.answer(request)
        return await answer_of(request, trust)
