"""The exceptions copilot_nb raises, in one tree.

    CopilotError                  anything copilot_nb raises on purpose
    ├── ConfigError               a model string, option or setting that cannot work
    │   └── PolicyError           the administrator's policy refuses it (names the file and rule)
    ├── ModelError                the model could not give a reply
    │   ├── ModelHTTPError        the provider answered with an HTTP error (.status, .body)
    │   │   ├── AuthError         401/403: missing, wrong or expired credentials
    │   │   ├── ContextLengthError the conversation no longer fits the model's context window
    │   │   └── GatewayBudgetError a gateway (LiteLLM) refused: its budget is spent (also below)
    │   ├── ContextBudgetError    the conversation does not fit even after compaction; never sent
    │   ├── BudgetExceeded        a token budget is spent: the request was not sent (or refused)
    │   ├── ModelConnectionError  the provider could not be reached, or the stream broke
    │   ├── LookupFailed          a model list, /props or /api/show: too slow or too large
    │   └── StreamError           the stream carried an error event or could not be decoded
    ├── SandboxError              a path the workspace refuses (outside the root, a symlink out)
    ├── ToolError                 a tool could not do its job; becomes an error *result* for the model
    ├── AgentError                a run ended without an answer (`Agent.ask`): model error, max_rounds
    └── ScriptError               a scripted model was called beyond its script (testing)

Tool failures are data: the agent turns ToolError and SandboxError into results the model reads.
Our own bugs are ordinary exceptions and surface as such.
"""

from __future__ import annotations

from typing import Any


class CopilotError(Exception):
    """Base class of every error copilot_nb raises on purpose."""


class ConfigError(CopilotError):
    """A configuration value (model string, option, environment) that cannot work."""


class PolicyError(ConfigError):
    """The administrator's policy refuses a choice; the message names the policy file and rule."""


class ModelError(CopilotError):
    """The model could not give a reply."""


class ModelHTTPError(ModelError):
    """The provider answered with an HTTP error status."""

    def __init__(
        self, message: str, *, status: int, body: Any = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retry_after = retry_after
        """Seconds the provider asked to wait before trying again (`Retry-After`), if it said."""


class AuthError(ModelHTTPError):
    """Credentials are missing, wrong or expired (HTTP 401/403)."""


class ContextLengthError(ModelHTTPError):
    """The request was refused because the conversation is longer than the model's window."""


class ContextBudgetError(ModelError):
    """The request would not fit the model's window even after compaction, so it was not sent."""


class BudgetExceeded(ModelError):
    """A budget the administrator set (or a gateway's) is spent: the turn pauses, never retries."""


class GatewayBudgetError(ModelHTTPError, BudgetExceeded):
    """The gateway in front of the models (LiteLLM) answered that its budget is spent."""


class ModelConnectionError(ModelError):
    """The provider could not be reached, or the connection broke mid-stream."""

    retryable = True
    """A broken connection may well work the next time."""


class LookupFailed(ModelError):
    """A lookup a turn or `%copilot models` waits for (a model list, a server's `/props`,
    Ollama's `/api/show`) took longer than its deadline or answered more than its size cap."""


TRANSIENT_KINDS = frozenset(
    {
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "server_error",
        "timeout",
        "internal_error",
    }
)
"""Error types a provider reports mid-stream for a passing condition, worth asking again."""


class StreamError(ModelError):
    """The stream reported an error, or its bytes could not be decoded."""

    def __init__(self, message: str, *, body: Any = None) -> None:
        super().__init__(message)
        self.body = body

    @property
    def retryable(self) -> bool:
        """True when the provider said the failure will pass (overloaded, server error...)."""
        error = self.body.get("error", self.body) if isinstance(self.body, dict) else None
        if not isinstance(error, dict):
            return False
        kind = error.get("type") or error.get("code")
        return isinstance(kind, str) and kind in TRANSIENT_KINDS


class SandboxError(CopilotError):
    """The workspace refuses a path: outside its root, or through a symlink that leaves it."""


class ToolError(CopilotError):
    """A tool could not do its job; the message is shown to the model, which may retry."""


class AgentError(CopilotError):
    """A run ended without an answer; the message is the `Failed` event's text."""


class ScriptError(CopilotError):
    """A scripted model received a request its script does not cover."""
