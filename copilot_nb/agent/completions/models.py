"""Which model completes, from a model string: a fill-in-the-middle wire where the provider has
one, else the chat model with a completion prompt.

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
from ...models.chat_fill import ChatFill
from ...models.fim import FillModel, record_with_cassettes
from ..model_strings import split_spec

FILL_PROVIDERS = ("openai-completions", "deepseek", "mistral", "ollama", "llamacpp", "copilot")
NO_MODEL = (
    "no model configured for completions: set %config CopilotMagics.completion_model "
    "(e.g. ollama:qwen2.5-coder:1.5b) or choose a model with %copilot model"
)


def resolve_fill(spec: str, chat_model: Callable[[str], Model]) -> FillModel:
    """The model that completes for `spec`; `chat_model` builds (or reuses) a chat model.
    A fill-in-the-middle wire's requests are recorded while the kernel's cassette records
    (as lookups, out of the turns' order); a chat model's are not (its path is in order)."""
    fill = _resolve(spec, chat_model)
    if not isinstance(fill, ChatFill):
        record_with_cassettes(fill)
    return fill


def _resolve(spec: str, chat_model: Callable[[str], Model]) -> FillModel:
    provider, name = split_spec(spec)
    if provider in ("offline", "demo", ""):
        raise ConfigError(NO_MODEL)
    if not name:
        raise ConfigError(f"completion model {spec!r} names no model; write it as provider:model")
    if provider == "openai-completions":
        from ...models.openai.completions import OpenAICompletions

        return OpenAICompletions(name, provider="openai-completions")
    if provider == "deepseek":
        from ...models.openai.completions import DeepSeekFill

        return DeepSeekFill(name)
    if provider == "mistral":
        from ...models.openai.completions import MistralFill

        return MistralFill(name)
    if provider == "ollama":
        from ...models.openai.ollama_generate import OllamaFill

        return OllamaFill(name)
    if provider == "llamacpp":
        from ...models.openai.llama_infill import LlamaCppFill

        return LlamaCppFill(name)
    if provider == "copilot":
        from ...models.copilot.completions import DEFAULT_ENGINE, CopilotFill

        engine = name if ("codex" in name or name.endswith("-copilot")) else DEFAULT_ENGINE
        return CopilotFill(engine)
    return ChatFill(chat_model(spec))
