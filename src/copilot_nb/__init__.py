"""copilot_nb: an agent that lives in the Jupyter kernel.

`%load_ext copilot_nb`, then a `%%copilot` cell with a request; or, from Python,
`async for event in Agent(model=...).run("...")`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .agent import Agent
from .approvals import ApprovalPolicy
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
from .providers import resolve_model
from .providers.anthropic import AnthropicChat
from .providers.copilot import CopilotChat
from .providers.openai import OpenAIChat
from .sandbox import Workspace
from .tools import Tool, ToolOutput, ToolSet, tool

if TYPE_CHECKING:
    from .panel import ChatPanel

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
    from .magics import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext copilot_nb`."""
    from .magics import unload_ipython_extension as unload

    unload(shell)


def chat(**options: Any) -> ChatPanel:
    """Open the chat panel (JupyterLab sidebar via `sidecar`, else inline); widgets load only now."""
    from .panel import chat as open_chat

    return open_chat(**options)
