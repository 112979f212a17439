"""The fake Copilot's model list: entries in the shape of the real `GET /models` answer.

The shape (field names, `supported_endpoints`, `billing`) follows the real list in
`tests/data/conformance/responses/copilot/models.json`; the entries are a small cast, one per
way a model is served: Chat Completions only (listing no endpoints, as older models do), Claude
with Messages and Chat Completions, a Responses-only codex model, and one served only through
an endpoint copilot_nb does not speak.
"""

from __future__ import annotations

from typing import Any

CHAT, RESPONSES, MESSAGES = "/chat/completions", "/responses", "/v1/messages"


def _model(
    id: str, name: str, vendor: str, family: str, window: int, prompt: int, output: int, **more: Any
) -> dict[str, Any]:
    """One `/models` entry in the shape of the real list (`models.json` of the samples)."""
    kind = more.pop("type", "chat")
    supports = {"streaming": True, "tool_calls": more.pop("tool_calls", True)}
    limits = {"max_context_window_tokens": window, "max_prompt_tokens": prompt}
    limits["max_output_tokens"] = output
    multiplier = more.pop("multiplier", 0)
    entry: dict[str, Any] = {
        "billing": {"is_premium": multiplier > 0, "multiplier": multiplier},
        "capabilities": {
            "family": family,
            "limits": limits,
            "object": "model_capabilities",
            "supports": supports,
            "tokenizer": "o200k_base",
            "type": kind,
        },
        "id": id,
        "model_picker_enabled": more.pop("picker", True),
        "name": name,
        "object": "model",
        "preview": more.pop("preview", False),
        "vendor": vendor,
        "version": id,
    }
    endpoints = more.pop("endpoints", None)
    if endpoints is not None:  # older models list none, and speak Chat Completions
        entry["supported_endpoints"] = list(endpoints)
    entry.update(more)
    return entry


COPILOT_MODELS: list[dict[str, Any]] = [
    _model("gpt-4o", "GPT-4o", "Azure OpenAI", "gpt-4o", 128000, 64000, 4096),
    _model("gpt-4.1", "GPT-4.1", "Azure OpenAI", "gpt-4.1", 128000, 128000, 16384),
    _model(
        "claude-sonnet-4",
        "Claude Sonnet 4",
        "Anthropic",
        "claude-sonnet-4",
        216000,
        128000,
        16000,
        multiplier=1,
        endpoints=[CHAT, MESSAGES],
        policy={"state": "enabled", "terms": "Enable access to Claude Sonnet 4."},
    ),
    _model(
        "gpt-5.3-codex",
        "GPT-5.3-Codex",
        "OpenAI",
        "gpt-5.3-codex",
        400000,
        272000,
        128000,
        multiplier=1,
        endpoints=[RESPONSES, "ws:/responses"],
        policy={"state": "enabled"},
    ),
    _model(
        "gpt-5.4-mini",
        "GPT-5.4 mini",
        "OpenAI",
        "gpt-5.4-mini",
        400000,
        272000,
        128000,
        multiplier=0.33,
        endpoints=["ws:/responses"],
        policy={"state": "enabled"},
    ),
    _model("o3-mini", "o3-mini", "Azure OpenAI", "o3-mini", 200000, 64000, 100000, picker=False),
    _model(
        "gemini-2.5-pro",
        "Gemini 2.5 Pro (Preview)",
        "Google",
        "gemini-2.5-pro",
        128000,
        128000,
        64000,
        multiplier=1,
        endpoints=[CHAT],
        preview=True,
        policy={"state": "disabled"},
    ),
    _model(
        "o1-mini",
        "o1-mini",
        "Azure OpenAI",
        "o1-mini",
        128000,
        64000,
        65536,
        tool_calls=False,
    ),
    _model(
        "text-embedding-3-small",
        "Embedding V3 small",
        "Azure OpenAI",
        "text-embedding-3-small",
        8191,
        8191,
        0,
        type="embeddings",
        tool_calls=False,
        picker=False,
    ),
]
"""A `/models` answer shaped like Copilot's: chat and embedding models, limits, policies, the
endpoints that serve each model and its premium multiplier. `gpt-5.4-mini` lists only the
WebSocket Responses endpoint, so it stands for a model served through nothing we speak."""
