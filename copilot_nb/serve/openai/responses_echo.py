"""What a Response object says of its own request: pure, from the checked request body.

The Open Responses specification requires a Response to carry every setting it was made with
(its `ResponseResource`: sampling, tools, text format, limits, and the service's own), so a
client can read what it got. The proxy keeps nothing and forwards some settings upstream (the
sampling ones, the tools, `text.format` as `response_format`, `max_output_tokens`); a Response
says those as the request asked them, and, where the request set nothing, the Responses API's
documented defaults (temperature and top_p 1, the penalties 0): the upstream's own defaults are
not known here. What the proxy does not forward is said as what was used: no prompt cache key,
no safety identifier, no log probabilities, no tool-call limit, the default service tier.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNASKED: Mapping[str, Any] = {
    "instructions": None,
    "user": None,
    "metadata": {},
    "tools": [],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "text": {"format": {"type": "text"}},
    "temperature": 1.0,
    "top_p": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "max_output_tokens": None,
    "top_logprobs": 0,
    "max_tool_calls": None,
    "truncation": "disabled",
    "reasoning": None,
    "previous_response_id": None,
    "store": False,
    "background": False,
    "service_tier": "default",
    "safety_identifier": None,
    "prompt_cache_key": None,
}
"""A Response's settings when its request set none of them (and those the proxy never uses)."""

_SAMPLING = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_AS_SENT = ("instructions", "user")


def echo_of(body: Mapping[str, Any], *, max_output_tokens: int | None) -> dict[str, Any]:
    """The settings a checked request set, as its Response repeats them (over `UNASKED`)."""
    echo: dict[str, Any] = {key: body[key] for key in _AS_SENT if body.get(key) is not None}
    for key in _SAMPLING:
        value = body.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            echo[key] = value
    if isinstance(metadata := body.get("metadata"), Mapping):
        echo["metadata"] = dict(metadata)
    if tools := body.get("tools"):
        echo["tools"] = [function_tool(tool) for tool in tools]
    if (choice := body.get("tool_choice")) is not None:
        echo["tool_choice"] = choice
    if body.get("parallel_tool_calls") is False:
        echo["parallel_tool_calls"] = False
    if (fmt := _text_format(body.get("text"))) is not None:
        echo["text"] = {"format": fmt}
    if max_output_tokens is not None:
        echo["max_output_tokens"] = max_output_tokens
    return echo


def function_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A function tool as sent, with the fields a Response's tool always has (null: not sent)."""
    return {
        **tool,
        "description": tool.get("description"),
        "parameters": tool.get("parameters"),
        "strict": tool.get("strict"),
    }


def _text_format(text: Any) -> dict[str, Any] | None:
    """The `text.format` asked for, whole (a JSON schema's `description` null and `strict`
    false when not sent, as the upstream takes them); None for plain text."""
    fmt = text.get("format") if isinstance(text, Mapping) else None
    if not isinstance(fmt, Mapping) or fmt.get("type") not in ("json_schema", "json_object"):
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    return {
        **fmt,
        "description": fmt.get("description"),
        "strict": fmt.get("strict") is True,
    }
