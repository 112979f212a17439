"""Copilot's `/models` list, and which of its endpoints serves each model (pure).

Copilot lists per model the endpoints that serve it (`supported_endpoints`): Claude is served in
Anthropic's Messages format (`/v1/messages`) and in Chat Completions; the GPT-5 codex line and
others only through the Responses API (`/responses`, and `ws:/responses`); older models list no
endpoints and speak Chat Completions. A request on an endpoint a model is not served on is
answered `400 {"error": {"code": "unsupported_api_for_model"}}`. Samples of the list and the error
are in `tests/data/conformance/responses/copilot/`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...text import SERVER_NAME_CHARS, server_text

CHAT = "/chat/completions"
MESSAGES = "/v1/messages"
RESPONSES = "/responses"

PREFERENCE = (MESSAGES, RESPONSES, CHAT)
"""Best first: Messages keeps Claude's signed thinking across turns, Responses keeps the GPT-5
line's reasoning items; Chat Completions is what every other model speaks."""

ENDPOINT_NAMES = {MESSAGES: "messages", RESPONSES: "responses", CHAT: "chat"}


@dataclass(frozen=True, kw_only=True)
class CopilotModelInfo:
    """One entry of Copilot's `/models`: what `%copilot models` shows and a picker needs."""

    id: str
    name: str
    vendor: str = ""
    family: str = ""
    kind: str = "chat"
    context_window: int | None = None
    max_prompt_tokens: int | None = None
    max_output_tokens: int | None = None
    tool_calls: bool = False
    tool_calls_listed: bool = False
    """The list says whether it calls tools (`supports.tool_calls` present): only then does a
    False mean it cannot."""
    streaming: bool = False
    vision: bool = False
    """It accepts images (`supports.vision`); the list names it only for models that do."""
    max_images: int | None = None
    max_image_bytes: int | None = None
    image_types: tuple[str, ...] = ()
    """`limits.vision`: images per request, bytes per image, the media types it takes."""
    picker_enabled: bool = False
    preview: bool = False
    enabled: bool = True
    """False when an admin or the user must first enable the model (`policy.state`)."""
    endpoints: tuple[str, ...] = ()
    """`supported_endpoints` as listed; empty when the list names none (Chat Completions)."""
    premium_multiplier: float | None = None
    """Premium requests one request costs (`billing.multiplier`; 0: included in the plan)."""


def parse_models(payload: Any) -> list[CopilotModelInfo]:
    """Copilot's `/models` answer as `CopilotModelInfo`s; missing fields get neutral defaults,
    and every word the list gives is made plain and cut to a name's size (`server_text`)."""
    entries = payload.get("data") if isinstance(payload, Mapping) else payload
    models = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or not entry.get("id"):
            continue
        capabilities = _mapping(entry.get("capabilities"))
        limits = _mapping(capabilities.get("limits"))
        supports = _mapping(capabilities.get("supports"))
        policy = _mapping(entry.get("policy"))
        endpoints = entry.get("supported_endpoints")
        multiplier = _mapping(entry.get("billing")).get("multiplier")
        vision = _mapping(limits.get("vision"))
        types = vision.get("supported_media_types")
        models.append(
            CopilotModelInfo(
                id=_name(entry["id"]),
                name=_name(entry.get("name") or entry["id"]),
                vendor=_name(entry.get("vendor") or ""),
                family=_name(capabilities.get("family") or ""),
                kind=_name(capabilities.get("type") or "chat"),
                context_window=_count(limits.get("max_context_window_tokens")),
                max_prompt_tokens=_count(limits.get("max_prompt_tokens")),
                max_output_tokens=_count(limits.get("max_output_tokens")),
                tool_calls=bool(supports.get("tool_calls")),
                tool_calls_listed="tool_calls" in supports,
                streaming=bool(supports.get("streaming")),
                vision=bool(supports.get("vision")),
                max_images=_count(vision.get("max_prompt_images")),
                max_image_bytes=_count(vision.get("max_prompt_image_size")),
                image_types=tuple(_name(t) for t in types) if isinstance(types, list) else (),
                picker_enabled=bool(entry.get("model_picker_enabled")),
                preview=bool(entry.get("preview")),
                enabled=policy.get("state", "enabled") == "enabled",
                endpoints=tuple(
                    _name(e) for e in (endpoints if isinstance(endpoints, list) else ()) if e
                ),
                premium_multiplier=_number(multiplier),
            )
        )
    return models


def choose_endpoint(
    info: CopilotModelInfo | None,
    *,
    spoken: Sequence[str] = PREFERENCE,
    refused: Collection[str] = (),
) -> str | None:
    """The endpoint to ask `info`'s model through: the best listed one we speak (`spoken`, best
    first) that the API has not `refused`; Chat Completions (then Responses) for a model that lists
    none or is not in the list; None when nothing is left."""
    listed = info.endpoints if info is not None else ()
    candidates = (
        [e for e in spoken if e in listed]
        if listed
        else [e for e in (CHAT, RESPONSES) if e in spoken]
    )
    return next((e for e in candidates if e not in refused), None)


def endpoint_label(info: CopilotModelInfo, spoken: Sequence[str] = PREFERENCE) -> str:
    """How `%copilot models` names the endpoint a model is asked through."""
    endpoint = choose_endpoint(info, spoken=spoken)
    if endpoint is None:
        return "none we speak (" + ", ".join(info.endpoints) + ")"
    return ENDPOINT_NAMES[endpoint]


def unsupported_api(body: Any) -> bool:
    """Copilot's answer to a model asked through an endpoint that does not serve it."""
    error = body.get("error") if isinstance(body, Mapping) else None
    return isinstance(error, Mapping) and error.get("code") == "unsupported_api_for_model"


def _name(value: Any) -> str:
    return server_text(value, SERVER_NAME_CHARS, one_line=True)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
