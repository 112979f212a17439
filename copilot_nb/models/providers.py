"""The providers copilot_nb talks to, one row each (`provider.Provider`).

Model strings (`agent/model_strings.py`, whose table adds the offline demo and what packages
register), the completion model (`agent/ghost_text/model_choice.py`) and `%copilot models`
(`jupyter/commands/login.py`) all read these rows, and a wire built by hand
(`OpenAIChat("gpt-4o")`) takes its provider's row from here. An OpenAI-compatible service with a
key of its own is one more row: the chat and fill wires below, its key variable, its address,
its sign-in sentence. Wires are imported when a row first builds one (`wire`).
"""

from __future__ import annotations

from typing import Any

from .provider import Key, Provider, Providers, chat_names, later, wire

OPENAI_CHAT = wire("openai.chat", "OpenAIChat")
"""Chat Completions: what every OpenAI-compatible server speaks."""
OPENAI_RESPONSES = wire("openai.responses", "OpenAIResponses")
OPENAI_FILL = wire("openai.fim_completions", "OpenAICompletions")
"""Fill in the middle through an OpenAI-compatible `/completions` with `suffix`."""


async def server_ids(model: Any) -> list[str]:
    """`GET {base}/models` of an OpenAI-compatible server."""
    ids: list[str] = await model.model_ids()
    return ids


_OPENAI = Key("OPENAI_API_KEY")
_OPENAI_URL = "https://api.openai.com/v1"
_OPENAI_SIGN_IN = (
    "Set OPENAI_API_KEY to a key from https://platform.openai.com/api-keys, or OPENAI_BASE_URL "
    "to another server."
)

BUILT_IN = Providers(
    (
        Provider(
            name="openai",
            chat=OPENAI_CHAT,
            keys=(_OPENAI,),
            base_url_env="OPENAI_BASE_URL",
            base_url=_OPENAI_URL,
            sign_in=_OPENAI_SIGN_IN,
            list_models=server_ids,
            window="server",
        ),
        Provider(
            name="openai-responses",
            chat=OPENAI_RESPONSES,
            keys=(_OPENAI,),
            base_url_env="OPENAI_BASE_URL",
            base_url=_OPENAI_URL,
            sign_in=_OPENAI_SIGN_IN,
            list_models=server_ids,
            window="server",
        ),
        Provider(
            name="ollama",
            chat=wire("openai.ollama", "OllamaChat"),
            fill=wire("openai.ollama_generate", "OllamaFill"),
            base_url_env="OLLAMA_BASE_URL",
            base_url="http://localhost:11434/v1",
            sign_in="Start Ollama, or set OLLAMA_BASE_URL to where it runs.",
            list_models=server_ids,
            window="ollama",
        ),
        Provider(
            name="anthropic",
            chat=wire("anthropic.chat", "AnthropicChat"),
            keys=(
                Key("ANTHROPIC_API_KEY", header="x-api-key", scheme=""),
                Key("ANTHROPIC_AUTH_TOKEN"),  # a gateway's bearer token; as in the SDK, a key wins
            ),
            base_url_env="ANTHROPIC_BASE_URL",
            base_url="https://api.anthropic.com",
            sign_in="Set ANTHROPIC_API_KEY to a key from https://console.anthropic.com/settings/keys.",
            window="name",
        ),
        Provider(
            name="copilot",
            chat=wire("copilot.chat", "CopilotChat"),
            fill=later("copilot.fim_completions", "copilot_fill"),
            base_url="https://api.githubcopilot.com",  # until the token names the account's API
            sign_in="Run `%copilot login` to sign in to GitHub with an account that has Copilot.",
            list_models=later("copilot.listing", "copilot_ids"),
            catalog=later("copilot.listing", "copilot_catalog"),
            window="catalog",
        ),
        Provider(
            name="openai-completions",
            fill=OPENAI_FILL,
            keys=(_OPENAI,),
            base_url_env="OPENAI_BASE_URL",
            base_url=_OPENAI_URL,
            sign_in=_OPENAI_SIGN_IN,
            window="server",
        ),
        Provider(
            name="deepseek",
            fill=OPENAI_FILL,  # its FIM beta is an OpenAI-style /completions with `suffix`
            keys=(Key("DEEPSEEK_API_KEY"),),
            base_url_env="DEEPSEEK_BASE_URL",
            base_url="https://api.deepseek.com/beta",
            sign_in="Set DEEPSEEK_API_KEY.",
            window="server",
        ),
        Provider(
            name="mistral",
            fill=wire("openai.fim_completions", "MistralFill"),
            keys=(Key("MISTRAL_API_KEY"),),
            base_url_env="MISTRAL_BASE_URL",
            base_url="https://api.mistral.ai/v1",
            sign_in="Set MISTRAL_API_KEY.",
            window="server",
        ),
        Provider(
            name="llamacpp",
            fill=wire("openai.llama_infill", "LlamaCppFill"),
            keys=(Key("LLAMA_CPP_API_KEY"),),
            base_url_env="LLAMA_CPP_BASE_URL",
            base_url="http://localhost:8080",
            sign_in="Start llama-server, or set LLAMA_CPP_BASE_URL (and LLAMA_CPP_API_KEY, "
            "its --api-key).",
            window="server",
        ),
    ),
    hook="",
)
"""Every built-in provider, by the name its model strings start with; chat providers first, in
the order an unknown-provider error lists them. Packages' rows are added by the full table
(`agent/model_strings.PROVIDERS`), not here."""


PROVIDERS = BUILT_IN
"""The built-in table under its older name; a surface that lists providers for a person reads
`agent/model_strings.PROVIDERS`, which has the offline demo and packages' providers too."""


def row(name: str) -> Provider:
    """The built-in provider a wire built by hand speaks for (`OpenAIChat` for `openai`)."""
    return BUILT_IN[name]


__all__ = [
    "BUILT_IN",
    "OPENAI_CHAT",
    "OPENAI_FILL",
    "OPENAI_RESPONSES",
    "PROVIDERS",
    "Key",
    "Provider",
    "chat_names",
    "row",
    "server_ids",
]
