"""Model classes, and `resolve_model("provider:model")` which turns a model string into one."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import ConfigError
from ..models.base import Model, collect
from ..policy import check_model

DEFAULT_OPENAI_MODEL = "gpt-4o"
PROVIDERS = ("openai", "openai-responses", "ollama", "anthropic", "copilot", "offline")


def default_model_spec(environ: Mapping[str, str] | None = None) -> str:
    """`COPILOT_NB_MODEL`, else OpenAI when `OPENAI_API_KEY` is set, else the offline demo."""
    env = os.environ if environ is None else environ
    if env.get("COPILOT_NB_MODEL"):
        return env["COPILOT_NB_MODEL"]
    if env.get("OPENAI_API_KEY"):
        return f"openai:{DEFAULT_OPENAI_MODEL}"
    return "offline"


NO_PROVIDER = (
    "copilot_nb: no model provider is set, so %%copilot will answer with an offline demo; "
    "set one first: %env OPENAI_API_KEY=sk-... (or COPILOT_NB_MODEL=anthropic:claude-sonnet-4-5 "
    "or ollama:qwen3), or %copilot login for GitHub Copilot."
)
"""What `%load_ext` says, in one line, when the demo is all a new user would get."""


def provider_hint(chosen: str = "") -> str:
    """`NO_PROVIDER` when the model in use (`chosen`, else the default) is the offline demo."""
    provider, _ = split_spec(chosen or default_model_spec())
    return NO_PROVIDER if provider in ("offline", "demo") else ""


def split_spec(spec: str) -> tuple[str, str]:
    """(provider, model) of a model string; a bare name is an OpenAI model, `offline` none."""
    provider, _, name = spec.strip().partition(":")
    if not name and provider not in ("offline", "demo"):
        return "openai", provider
    return provider.lower(), name


def resolve_model(spec: str | None = None) -> Model:
    """Build the model named by `provider:model` (`openai:gpt-4o`, `copilot:gpt-4o`, `offline`)."""
    spec = (spec or default_model_spec()).strip()
    provider, name = split_spec(spec)
    if provider in ("offline", "demo"):
        from ..testing.offline import OfflineModel

        return OfflineModel()
    if not name:
        raise ConfigError(
            f"model {spec!r} names no model; write it as provider:model, e.g. openai:gpt-4o"
        )
    if provider in PROVIDERS:
        check_model(provider, name)  # the administrator's policy, before anything is built
    if provider == "openai":
        from ..models.openai.chat import OpenAIChat

        return OpenAIChat(name)
    if provider == "openai-responses":
        from ..models.openai.responses import OpenAIResponses

        return OpenAIResponses(name)
    if provider == "ollama":
        from ..models.openai.ollama import OllamaChat

        return OllamaChat(name)  # at OLLAMA_BASE_URL, else http://localhost:11434/v1
    if provider == "anthropic":
        from ..models.anthropic.chat import AnthropicChat

        return AnthropicChat(name)
    if provider == "copilot":
        from ..models.copilot.chat import CopilotChat

        return CopilotChat(name)
    raise ConfigError(
        f"unknown provider {provider!r} in model {spec!r}; use one of: {', '.join(PROVIDERS)}"
    )


__all__ = [
    "Model",
    "collect",
    "default_model_spec",
    "provider_hint",
    "resolve_model",
    "split_spec",
]
