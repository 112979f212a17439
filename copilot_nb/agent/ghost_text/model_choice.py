"""Which model completes, from a model string: a fill-in-the-middle wire where the provider has
one, else the chat model with a completion prompt.

Each provider's entry in `models/providers.py` says which wire it fills through:
`openai-completions:` (an OpenAI-compatible `/v1/completions` at `OPENAI_BASE_URL`: vLLM, LM
Studio, OpenAI's own), `deepseek:`, `mistral:`, `ollama:` (`/api/generate` with `suffix`),
`llamacpp:` (`/infill`), `copilot:` (the editors' ghost-text engine: `copilot:copilot-codex`, and
the same engine when the kernel's model is a Copilot chat model); any other provider's model
(`openai:`, `anthropic:`, `openai-responses:`) completes through its chat API. `offline` has
nothing to complete with.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import ConfigError
from ...models.base import Model
from ...models.cassettes.cassette import recording_cassette
from ...models.chat_fill import ChatFill
from ...models.fim import FillModel
from ...models.provider import Registry
from ..model_spec import OFFLINE, split_spec
from ..model_strings import PROVIDERS

NO_MODEL = (
    "no model configured for completions: set %config CopilotMagics.completion_model "
    "(e.g. ollama:qwen2.5-coder:1.5b) or choose a model with %copilot model"
)


def resolve_fill(
    spec: str, chat_model: Callable[[str], Model], *, registry: Registry = PROVIDERS
) -> FillModel:
    """The model that completes for `spec`; `chat_model` builds (or reuses) a chat model.
    A fill-in-the-middle wire's requests are recorded while the kernel's cassette records
    (as lookups, out of the turns' order); a chat model's are not (its path is in order)."""
    fill = _resolve(spec, chat_model, registry)
    if fill.endpoint is not None:
        fill.endpoint.tape = recording_cassette
    return fill


def _resolve(spec: str, chat_model: Callable[[str], Model], registry: Registry) -> FillModel:
    """The provider's fill-in-the-middle wire where its entry has one, else its chat model."""
    provider, name = split_spec(spec)
    if provider in (*OFFLINE, ""):
        raise ConfigError(NO_MODEL)
    if not name:
        raise ConfigError(f"completion model {spec!r} names no model; write it as provider:model")
    entry = registry.get(provider)
    if entry is not None and entry.fill is not None:
        return entry.build_fill(name)
    return ChatFill(chat_model(spec))
