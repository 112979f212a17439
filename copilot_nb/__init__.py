"""copilot_nb: an agent that lives in the Jupyter kernel.

`%load_ext copilot_nb`, then a `%%copilot` cell with a request; or, from Python,
`async for event in Agent(model=...).run("...")`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .agent.approvals.policy import ApprovalPolicy
from .errors import (
    AgentError,
    AuthError,
    ConfigError,
    ContextBudgetError,
    ContextLengthError,
    CopilotError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    SandboxError,
    ScriptError,
    StreamError,
    ToolError,
)
from .messages import AssistantMessage, ToolCall, ToolResult, ToolSpec, Usage

if TYPE_CHECKING:
    from .agent.loop.rounds import Agent
    from .agent.loop.run_settings import RunSettings
    from .agent.model_strings import resolve_model
    from .jupyter.panel.widget import ChatPanel
    from .models.anthropic.chat import AnthropicChat
    from .models.copilot.chat import CopilotChat
    from .models.openai.chat import OpenAIChat
    from .models.openai.responses import OpenAIResponses
    from .tools import Tool, ToolOutput, ToolSet, tool
    from .workspace.workspace import Workspace

_LAZY = {
    "Agent": ".agent.loop.rounds",
    "AnthropicChat": ".models.anthropic.chat",
    "CopilotChat": ".models.copilot.chat",
    "OpenAIChat": ".models.openai.chat",
    "OpenAIResponses": ".models.openai.responses",
    "RunSettings": ".agent.loop.run_settings",
    "Tool": ".tools",
    "ToolOutput": ".tools",
    "ToolSet": ".tools",
    "Workspace": ".workspace.workspace",
    "resolve_model": ".agent.model_strings",
    "tool": ".tools",
}
"""Public names whose modules load on first use (PEP 562), so `%load_ext copilot_nb` does not
import httpx, the agent and every tool before the first request."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'copilot_nb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentError",
    "AnthropicChat",
    "ApprovalPolicy",
    "AssistantMessage",
    "AuthError",
    "ConfigError",
    "ContextBudgetError",
    "ContextLengthError",
    "CopilotChat",
    "CopilotError",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "OpenAIChat",
    "OpenAIResponses",
    "RunSettings",
    "SandboxError",
    "ScriptError",
    "StreamError",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolOutput",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "Usage",
    "Workspace",
    "chat",
    "load_ipython_extension",
    "resolve_model",
    "tool",
    "unload_ipython_extension",
]


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext copilot_nb`."""
    from .jupyter.extension import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext copilot_nb`."""
    from .jupyter.extension import unload_ipython_extension as unload

    unload(shell)


def chat(**options: Any) -> ChatPanel:
    """Open the chat panel (JupyterLab sidebar via `sidecar`, else inline); widgets load only now."""
    from .jupyter.panel.opening import chat as open_chat

    return open_chat(**options)
