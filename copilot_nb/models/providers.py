"""The providers copilot_nb talks to, in one table, apart from the wires that speak their protocols.

A provider is what a user names in `provider:model`: a service (OpenAI, Anthropic, GitHub
Copilot, DeepSeek, Mistral) or a kind of local server (Ollama, llama.cpp). A wire is a class that
speaks one protocol (`OpenAIChat` speaks Chat Completions for OpenAI, Ollama, vLLM and Copilot
alike). Model strings (`agent/model_strings.py`), the completion model
(`agent/ghost_text/model_choice.py`) and `%copilot models` (`jupyter/commands/login.py`) all read
`PROVIDERS`, so adding a provider is adding one `Provider` here, as pydantic-ai's `providers/`
beside `infer_model`. Wires are imported when a provider first builds one (`wire`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from types import MappingProxyType
from typing import Any, Literal

from ..policy import check_model
from .base import Model
from .copilot.catalog import CopilotModelInfo, choose_endpoint
from .fim import FillModel

WindowSource = Literal["server", "ollama", "catalog", "name"]
"""Where a model's context window comes from: a local server's `/v1/models` or `/props`
(`server_props.ask_window`), Ollama's `/api/show` (`server_props.window_from_ollama_show`), the
provider's own model list (Copilot's `/models`), or the model's name (`capabilities`); the
user's `COPILOT_NB_CONTEXT_WINDOW` wins over each."""


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One provider: how its models are built, configured, signed in to, listed and sized."""

    name: str
    """The prefix of its model strings: `openai` in `openai:gpt-4o`."""
    sign_in: str
    """What a user does to use it, in one sentence: the key to set, or `%copilot login`."""
    window: WindowSource
    chat: Callable[[str], Model] | None = None
    """Builds its chat model for a model name; None: it only fills in the middle."""
    fill: Callable[[str], FillModel] | None = None
    """Builds its fill-in-the-middle wire; None: completions go through its chat model."""
    key_env: tuple[str, ...] = ()
    """The variables its key is read from at each request (`env_settings.FromEnv`), first wins."""
    base_url_env: str = ""
    """The variable that points it at another server, read at each request."""
    base_url: str = ""
    """Where it is when that variable is not set."""
    list_models: Callable[[Any], Awaitable[list[str]]] | None = None
    """The model ids it offers (a picker's choices), asked through one of its chat models."""
    catalog: Callable[[Any], Awaitable[Sequence[CopilotModelInfo]]] | None = None
    """Its full model list with limits and prices, shown as a table; None: ids only."""

    def build_chat(self, model: str) -> Model:
        """Its chat model for `model`, once the administrator's policy allows it."""
        if self.chat is None:
            raise ValueError(f"{self.name} has no chat model")
        check_model(self.name, model)  # the policy, before anything is built
        return self.chat(model)


Registry = Mapping[str, Provider]


def chat_names(registry: Registry) -> tuple[str, ...]:
    """The providers whose models chat, in the table's order."""
    return tuple(name for name, provider in registry.items() if provider.chat is not None)


# --- how each provider builds its wires (imported on first use) ------------------------------------


def wire(module: str, cls: str, **options: Any) -> Callable[[str], Any]:
    """A factory of `cls` from `module` (below `models/`, imported on first use: a kernel that
    talks to Ollama never loads the Anthropic or Copilot code) for a model name, with `options`."""

    def build(model: str) -> Any:
        return getattr(import_module(f"{__package__}.{module}"), cls)(model, **options)

    return build


def _copilot_fill(model: str) -> FillModel:
    """The editors' ghost-text engine: the engine named (`copilot-codex`, `*-copilot`), else the
    default one when the name is a chat model's."""
    from .copilot.fim_completions import DEFAULT_ENGINE, CopilotFill

    return CopilotFill(
        model if ("codex" in model or model.endswith("-copilot")) else DEFAULT_ENGINE
    )


async def _server_ids(model: Any) -> list[str]:
    """`GET {base}/models` of an OpenAI-compatible server."""
    ids: list[str] = await model.model_ids()
    return ids


async def _copilot_catalog(model: Any) -> Sequence[CopilotModelInfo]:
    infos: list[CopilotModelInfo] = await model.list_models()
    return infos


async def _copilot_ids(model: Any) -> list[str]:
    """The chat models of the editors' picker that copilot_nb can ask through some endpoint."""
    return [
        m.id
        for m in await model.list_models()
        if m.kind == "chat" and m.picker_enabled and choose_endpoint(m, spoken=model.spoken)
    ]


_OPENAI_SIGN_IN = "Set OPENAI_API_KEY (%env OPENAI_API_KEY=sk-...), or OPENAI_BASE_URL."
_LOGIN = "Run `%copilot login` to sign in to GitHub with an account that has Copilot."

PROVIDERS: Registry = MappingProxyType(
    {
        p.name: p
        for p in (
            Provider(
                name="openai",
                chat=wire("openai.chat", "OpenAIChat"),
                key_env=("OPENAI_API_KEY",),
                base_url_env="OPENAI_BASE_URL",
                base_url="https://api.openai.com/v1",
                sign_in=_OPENAI_SIGN_IN,
                list_models=_server_ids,
                window="server",
            ),
            Provider(
                name="openai-responses",
                chat=wire("openai.responses", "OpenAIResponses"),
                key_env=("OPENAI_API_KEY",),
                base_url_env="OPENAI_BASE_URL",
                base_url="https://api.openai.com/v1",
                sign_in=_OPENAI_SIGN_IN,
                list_models=_server_ids,
                window="server",
            ),
            Provider(
                name="ollama",
                chat=wire("openai.ollama", "OllamaChat"),
                fill=wire("openai.ollama_generate", "OllamaFill"),
                base_url_env="OLLAMA_BASE_URL",
                base_url="http://localhost:11434/v1",
                sign_in="Start Ollama, or set OLLAMA_BASE_URL to where it runs.",
                list_models=_server_ids,
                window="ollama",
            ),
            Provider(
                name="anthropic",
                chat=wire("anthropic.chat", "AnthropicChat"),
                key_env=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
                base_url_env="ANTHROPIC_BASE_URL",
                base_url="https://api.anthropic.com",
                sign_in="Set ANTHROPIC_API_KEY to a key from https://console.anthropic.com/settings/keys.",
                window="name",
            ),
            Provider(
                name="copilot",
                chat=wire("copilot.chat", "CopilotChat"),
                fill=_copilot_fill,
                sign_in=_LOGIN,
                list_models=_copilot_ids,
                catalog=_copilot_catalog,
                window="catalog",
            ),
            Provider(
                name="openai-completions",
                fill=wire(
                    "openai.fim_completions", "OpenAICompletions", provider="openai-completions"
                ),
                key_env=("OPENAI_API_KEY",),
                base_url_env="OPENAI_BASE_URL",
                base_url="https://api.openai.com/v1",
                sign_in=_OPENAI_SIGN_IN,
                window="server",
            ),
            Provider(
                name="deepseek",
                fill=wire("openai.fim_completions", "DeepSeekFill"),
                key_env=("DEEPSEEK_API_KEY",),
                base_url_env="DEEPSEEK_BASE_URL",
                base_url="https://api.deepseek.com/beta",
                sign_in="Set DEEPSEEK_API_KEY.",
                window="server",
            ),
            Provider(
                name="mistral",
                fill=wire("openai.fim_completions", "MistralFill"),
                key_env=("MISTRAL_API_KEY",),
                base_url_env="MISTRAL_BASE_URL",
                base_url="https://api.mistral.ai/v1",
                sign_in="Set MISTRAL_API_KEY.",
                window="server",
            ),
            Provider(
                name="llamacpp",
                fill=wire("openai.llama_infill", "LlamaCppFill"),
                key_env=("LLAMA_CPP_API_KEY",),
                base_url_env="LLAMA_CPP_BASE_URL",
                base_url="http://localhost:8080",
                sign_in="Start llama-server, or set LLAMA_CPP_BASE_URL (and LLAMA_CPP_API_KEY).",
                window="server",
            ),
        )
    }
)
"""Every provider, by the name its model strings start with; chat providers first, in the order
an unknown-provider error lists them."""

__all__ = ["PROVIDERS", "Provider", "Registry", "WindowSource", "chat_names"]
