"""A Chat Completions request body, checked and turned into a `ChatRequest`: pure, no I/O.

This is the one entry point the routes call: it checks the request's own fields and hands
`messages` and `tools` to `chat_messages`, and every refusal is an `ApiError` (re-exported here
from `api_errors`). Fields we do not know are ignored, as OpenAI-compatible servers do; the fields
in `PASSED_THROUGH` go to the upstream model as they are, and three of our own (`tool_execution`,
`use_notebook_tools`, `max_tool_rounds`) say what the proxy does with tools.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...messages import Message, ToolSpec
from ...models.base import ToolChoice
from .api_errors import (
    ApiError,
    invalid_type,
    invalid_value,
    kind,
    listed,
    missing,
    object_field,
    shown,
)
from .chat_messages import read_messages, read_tools

__all__ = [
    "MAX_TOOL_ROUNDS",
    "PASSED_THROUGH",
    "ApiError",
    "ChatRequest",
    "ToolExecution",
    "flag",
    "model_name",
    "parse_chat_request",
    "positive_int",
    "tool_choice_of",
]

PASSED_THROUGH = (
    "temperature",
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "parallel_tool_calls",
    "response_format",
)
"""Request fields handed to the upstream model unchecked (it knows their rules better)."""
MAX_TOOL_ROUNDS = 50
"""The most model rounds `max_tool_rounds` may ask for: past that a run is stuck, not working."""
ToolExecution = Literal["client", "auto"]
_CHOICES = ("none", "auto", "required")


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """A checked request: our messages and tools, and what goes to the upstream as is."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice = None
    """As our models take it: "none", "auto", "required" or the name of the one tool to call."""
    stream: bool = False
    include_usage: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    tool_execution: ToolExecution = "client"
    """"client": tool calls go back to the client; "auto": the proxy runs the kernel's tools."""
    use_notebook_tools: bool = False
    """Offer the kernel's tools (files, notebook, kernel) to the model beside the client's own."""
    max_tool_rounds: int | None = None
    """Model rounds the proxy may run with tool_execution "auto"; None: the server's default."""


def parse_chat_request(
    body: Any, *, models: Collection[str] | None, kernel_tools: Collection[str] | None = None
) -> ChatRequest:
    """Check a decoded request body; `models` (None: any) are the names served, `kernel_tools`
    (None: not known, not checked) the tools `use_notebook_tools` adds."""
    if not isinstance(body, Mapping):
        why = f'The body is {kind(body)}; send a JSON object {{"model": ..., "messages": [...]}}.'
        raise ApiError(why, code="invalid_type")
    model = model_name(body.get("model"), models)
    messages = read_messages(body.get("messages"))
    use_notebook_tools = flag(body, "use_notebook_tools")
    tools = read_tools(body.get("tools"), kernel_tools if use_notebook_tools else ())
    offered: list[str] | None = [spec.name for spec in tools]
    if use_notebook_tools:  # the model sees the kernel's tools too, named or not known
        offered = None if kernel_tools is None else [spec.name for spec in tools] + [*kernel_tools]
    stream = flag(body, "stream")
    tool_execution, max_tool_rounds = _tool_execution(body)
    n = body.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n != 1):
        why = f"Unsupported value for 'n': {shown(n)}; the proxy returns one choice: send n=1."
        raise ApiError(why, param="n", code="unsupported_value")
    return ChatRequest(
        model=model,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice_of(body.get("tool_choice"), offered),
        stream=stream,
        include_usage=_include_usage(body.get("stream_options"), stream=stream),
        options=_options(body),
        tool_execution=tool_execution,
        use_notebook_tools=use_notebook_tools,
        max_tool_rounds=max_tool_rounds,
    )


def _tool_execution(body: Mapping[str, Any]) -> tuple[ToolExecution, int | None]:
    """Who runs the tool calls, and (when the proxy does) for how many model rounds at most."""
    given = body.get("tool_execution")
    if given not in (None, "client", "auto"):
        expected = "'client' (tool calls come back to you) or 'auto' (the proxy runs them)"
        raise invalid_value("tool_execution", given, expected)
    execution: ToolExecution = "auto" if given == "auto" else "client"
    rounds = positive_int(body, "max_tool_rounds", maximum=MAX_TOOL_ROUNDS)
    if rounds is not None and execution != "auto":
        why = (
            "'max_tool_rounds' counts the proxy's rounds; set tool_execution to 'auto' or drop it."
        )
        raise ApiError(why, param="max_tool_rounds", code="invalid_value")
    return execution, rounds


def model_name(model: Any, models: Collection[str] | None) -> str:
    """The requested model, one of `models` (None: any), as both the chat and Responses routes
    check it."""
    if model is None:
        raise missing("model", "name the model to use; GET /v1/models lists them.")
    if not isinstance(model, str) or not model:
        raise invalid_type("model", "a model name (a non-empty string)", model)
    if models is not None and model not in models:
        why = (
            f"The model {model!r} is not served here; it serves {listed(models)} (GET /v1/models)."
        )
        raise ApiError(why, param="model", code="model_not_found")
    return model


def tool_choice_of(value: Any, offered: list[str] | None, *, flat: bool = False) -> ToolChoice:
    """As our models take it; `offered` is every tool the model will see (None: not known).
    `flat`: the Responses API's `{"type": "function", "name": ...}`."""
    if value is None:
        return None
    if isinstance(value, str) and value in _CHOICES:
        if value == "required" and offered == []:
            why = "tool_choice 'required' needs tools, and the request has none; add tools."
            raise ApiError(why, param="tool_choice", code="invalid_value")
        return value
    if not isinstance(value, Mapping):
        shape = '"name": ...' if flat else '"function": {...}'
        expected = f"'none', 'auto', 'required' or {{\"type\": \"function\", {shape}}}"
        raise invalid_value("tool_choice", value, expected)
    if value.get("type") != "function":
        raise invalid_value("tool_choice.type", value.get("type"), "'function'")
    named = value if flat else object_field(value, "function", "tool_choice")
    param = "tool_choice.name" if flat else "tool_choice.function.name"
    name = named.get("name")
    if not isinstance(name, str):
        raise invalid_type(param, "a tool name", name)
    if offered == []:
        why = f"tool_choice names the tool {name!r}, but the request has no tools; add it to tools."
        raise ApiError(why, param=param, code="invalid_value")
    if offered is not None and name not in offered:
        why = f"tool_choice names {name!r}, not one of the tools ({listed(offered)}); pick one."
        raise ApiError(why, param=param, code="invalid_value")
    if flat:
        value = {"type": "function", "function": {"name": name}}
    return dict(value) if name in _CHOICES else name  # a tool named "auto" stays a dict


def _include_usage(value: Any, *, stream: bool) -> bool:
    if value is None:
        return False
    if not stream:
        why = "'stream_options' needs 'stream': true; set stream to true or drop stream_options."
        raise ApiError(why, param="stream_options", code="invalid_value")
    if not isinstance(value, Mapping):
        raise invalid_type("stream_options", "an object", value)
    return flag(value, "include_usage", "stream_options.")


def _options(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields for the upstream; `max_completion_tokens` (the newer name) is sent as
    `max_tokens`, which every provider we speak to takes."""
    options = {key: body[key] for key in PASSED_THROUGH if body.get(key) is not None}
    limits = {key: positive_int(body, key) for key in ("max_tokens", "max_completion_tokens")}
    given = {value for value in limits.values() if value is not None}
    if len(given) > 1:
        tokens, completion = limits["max_tokens"], limits["max_completion_tokens"]
        why = f"max_tokens ({tokens}) and max_completion_tokens ({completion}) disagree; send one."
        raise ApiError(why, param="max_completion_tokens", code="invalid_value")
    if given:
        options["max_tokens"] = given.pop()
    return options


def flag(obj: Mapping[str, Any], key: str, prefix: str = "") -> bool:
    """A boolean field, absent or null as False; anything else than a boolean refused."""
    value = obj.get(key)
    if value is not None and not isinstance(value, bool):
        raise invalid_type(f"{prefix}{key}", "a boolean (true or false)", value)
    return bool(value)


def positive_int(obj: Mapping[str, Any], key: str, *, maximum: int | None = None) -> int | None:
    """A token or round limit: a whole number from 1 (to `maximum`), or None when not sent."""
    value = obj.get(key)
    if value is None:
        return None
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or value < 1 or (maximum is not None and value > maximum):
        top = "" if maximum is None else f" up to {maximum}"
        raise invalid_value(key, value, f"a positive integer{top}")
    return int(value)
