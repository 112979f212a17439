"""A model string read as words: the provider and model it names, and which one is the default.

Apart from `model_strings.py`, which builds models, so that `%load_ext` can say that no provider
is set without importing the providers' table, its wires and httpx.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

DEFAULT_OPENAI_MODEL = "gpt-4o"
OFFLINE = ("offline", "demo")
"""The built-in demo model's names, its row's (`offline.PROVIDER`) first: it sends nothing
anywhere."""


def default_model_spec(environ: Mapping[str, str] | None = None) -> str:
    """`COPILOT_NB_MODEL`, else the model saved in JupyterLab's settings (or the chat panel's
    form), else OpenAI when an OpenAI key is set or saved, else the offline demo."""
    env = os.environ if environ is None else environ
    if env.get("COPILOT_NB_MODEL"):
        return env["COPILOT_NB_MODEL"]
    from ..models.key_store import saved_key  # read only when the environment names no model
    from .model_setting import model_setting

    if chosen := model_setting(environ).spec:
        return chosen
    if env.get("OPENAI_API_KEY") or saved_key("OPENAI_API_KEY"):
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
    return NO_PROVIDER if provider in OFFLINE else ""


def split_spec(spec: str) -> tuple[str, str]:
    """(provider, model) of a model string; a bare name is an OpenAI model, `offline` (or
    `demo`) the offline demo's row, which names none."""
    provider, _, name = spec.strip().partition(":")
    if provider.lower() in OFFLINE:
        return OFFLINE[0], name
    if not name:
        return "openai", provider
    return provider.lower(), name
