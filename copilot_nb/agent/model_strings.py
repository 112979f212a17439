"""Model classes, and `resolve_model("provider:model")` which turns a model string into one."""

from __future__ import annotations

from ..errors import ConfigError
from ..models.base import Model, collect
from ..models.providers import PROVIDERS, Registry, chat_names
from .model_spec import OFFLINE, default_model_spec, provider_hint, split_spec


def resolve_model(spec: str | None = None, *, registry: Registry = PROVIDERS) -> Model:
    """Build the model named by `provider:model` (`openai:gpt-4o`, `copilot:gpt-4o`, `offline`):
    the provider's entry in `registry` builds it."""
    spec = (spec or default_model_spec()).strip()
    provider, name = split_spec(spec)
    if provider in OFFLINE:
        from ..offline import OfflineModel

        return OfflineModel()
    if not name:
        raise ConfigError(
            f"model {spec!r} names no model; write it as provider:model, e.g. openai:gpt-4o"
        )
    entry = registry.get(provider)
    if entry is not None and entry.chat is not None:
        return entry.build_chat(name)  # the administrator's policy, before anything is built
    raise ConfigError(
        f"unknown provider {provider!r} in model {spec!r}; "
        f"use one of: {', '.join((*chat_names(registry), 'offline'))}"
    )


__all__ = [
    "Model",
    "collect",
    "default_model_spec",
    "provider_hint",
    "resolve_model",
    "split_spec",
]
