"""Model classes, and `resolve_model("provider:model")` which turns a model string into one.

`PROVIDERS` is the whole table a model string is looked up in: the built-in providers
(`models/providers.py`), the offline demo, and the providers installed packages register
through the `copilot_nb.providers` entry point (`models/provider.py`).
"""

from __future__ import annotations

from ..errors import ConfigError
from ..models.base import Model, collect
from ..models.provider import Providers, Registry, chat_names
from ..models.providers import BUILT_IN
from ..offline import PROVIDER as OFFLINE_PROVIDER
from .model_spec import default_model_spec, provider_hint, split_spec

PROVIDERS: Registry = Providers((*BUILT_IN.values(), OFFLINE_PROVIDER))
"""Every provider a model string may name, in the order an unknown-provider error lists them."""


def resolve_model(spec: str | None = None, *, registry: Registry = PROVIDERS) -> Model:
    """Build the model named by `provider:model` (`openai:gpt-4o`, `copilot:gpt-4o`, `offline`):
    the provider's row in `registry` builds it, once the administrator's policy allows it."""
    spec = (spec or default_model_spec()).strip()
    provider, name = split_spec(spec)
    entry = registry.get(provider)
    name = name or (entry.default_model if entry is not None else "")
    if not name:
        raise ConfigError(
            f"model {spec!r} names no model; write it as provider:model, e.g. openai:gpt-4o"
        )
    if entry is not None and entry.chat is not None:
        return entry.build_chat(name)  # the administrator's policy, before anything is built
    raise ConfigError(
        f"unknown provider {provider!r} in model {spec!r}; "
        f"use one of: {', '.join(chat_names(registry))}"
    )


def turn_note(model: Model, *, registry: Registry = PROVIDERS) -> str:
    """What a turn of `model` says first: its provider's note (the offline demo's), if any."""
    entry = registry.get(model.provider) if model.provider else None
    return entry.note if entry is not None else ""


__all__ = [
    "PROVIDERS",
    "Model",
    "collect",
    "default_model_spec",
    "provider_hint",
    "resolve_model",
    "split_spec",
    "turn_note",
]
