"""`AnthropicChat`: Claude through the Messages API, streamed over httpx.

Configured like the official SDK (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`): its provider's row
says so, and the endpoint reads them. The request body is
built by the pure `messages_request` (pinned by a snapshot test); the stream is decoded by the pure
`MessagesStreamDecoder`; this module only moves bytes between them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from ...events import ModelEvent
from ...messages import (
    AssistantMessage,
    Image,
    SystemMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
    as_messages,
    as_tool_spec,
)
from ..base import ChatModel, MessagesIn, ModelRequest, ToolChoice, ToolsIn
from ..endpoint import Endpoint, OnEndpoint
from ..providers import row
from ..transport import DEFAULT_TIMEOUT, stream_reply
from .cache import cache_breakpoints
from .stream import MessagesStreamDecoder

ANTHROPIC_VERSION = "2023-06-01"

# --- conversation -> request body (pure) ----------------------------------------------------------


def assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """An assistant reply as content blocks: signed thinking first, then text, then tool_use."""
    blocks: list[dict[str, Any]] = []
    # Anthropic only accepts thinking it signed; reasoning from other providers is not sent back.
    if message.reasoning_signature:
        blocks.append(
            {
                "type": "thinking",
                "thinking": message.reasoning,
                "signature": message.reasoning_signature,
            }
        )
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return blocks


def tool_result_block(result: ToolResult) -> dict[str, Any]:
    """A tool result: its text, or with images a list of text and base64 `image` blocks."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id}
    if result.images:
        text = [{"type": "text", "text": result.content}] if result.content else []
        block["content"] = text + [image_block(image) for image in result.images]
    elif result.content:
        block["content"] = result.content
    if result.is_error:
        block["is_error"] = True
    return block


def image_block(image: Image) -> dict[str, Any]:
    """An image as Anthropic's content block: its bytes inline, in base64."""
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    }


def anthropic_messages(messages: MessagesIn) -> tuple[str, list[dict[str, Any]]]:
    """Split a conversation into Anthropic's `system` text and alternating user/assistant turns.

    Tool results travel as `tool_result` blocks in a user turn; consecutive messages of the same
    role are merged into one turn, since the API expects the roles to alternate.
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in as_messages(messages):
        if isinstance(message, SystemMessage):
            if message.content:
                system.append(message.content)
        elif isinstance(message, UserMessage):
            text = [{"type": "text", "text": message.content}] if message.content else []
            add("user", text + [image_block(image) for image in message.images])
        elif isinstance(message, ToolResult):
            add("user", [tool_result_block(message)])
        elif isinstance(message, AssistantMessage):
            add("assistant", assistant_blocks(message))
        else:
            raise TypeError(f"not a message: {message!r}")

    for turn in turns:
        content = turn["content"]
        if turn["role"] == "user":
            # tool_result blocks must open the user turn that answers the tool calls.
            content.sort(key=lambda block: block["type"] != "tool_result")
        if len(content) == 1 and content[0]["type"] == "text":
            turn["content"] = content[0]["text"]
    return "\n\n".join(system), turns


def tool_to_anthropic(spec: ToolSpec) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": spec.name}
    if spec.description:
        tool["description"] = spec.description
    tool["input_schema"] = dict(spec.parameters)
    return tool


def tool_choice_to_anthropic(choice: ToolChoice) -> Mapping[str, Any] | None:
    """auto/none pass through, "required" is Anthropic's "any", any other string names a tool."""
    if choice is None:
        return None
    if isinstance(choice, str):
        if choice in ("auto", "none", "any"):
            return {"type": choice}
        if choice == "required":
            return {"type": "any"}
        return {"type": "tool", "name": choice}
    function = choice.get("function")
    if choice.get("type") == "function" and isinstance(function, Mapping):
        return {"type": "tool", "name": function.get("name", "")}
    return choice


def messages_request(
    model: str,
    messages: MessagesIn,
    *,
    tools: ToolsIn | None = None,
    tool_choice: ToolChoice = None,
    max_tokens: int = 8192,
    stream: bool = True,
    cache: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The Messages API request body; null fields are left out (the API rejects them). With
    `cache`, it carries prompt-cache breakpoints (`cache_breakpoints`)."""
    system, turns = anthropic_messages(messages)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    if system:
        body["system"] = system
    body["messages"] = turns
    if tools:
        body["tools"] = [tool_to_anthropic(as_tool_spec(tool)) for tool in tools]
        wire_choice = tool_choice_to_anthropic(tool_choice)
        if wire_choice is not None:
            body["tool_choice"] = dict(wire_choice)
    body["stream"] = stream
    body.update(openai_options_to_anthropic(body, options))
    if cache:
        cache_breakpoints(body)
    return body


def openai_options_to_anthropic(body: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """Options in Chat Completions' words (as a proxy client sends them) in the Messages API's:
    `stop` is `stop_sequences`, `user` is `metadata.user_id`, `parallel_tool_calls: false` is
    the tool choice's `disable_parallel_tool_use`. Anything else goes as it is (null fields are
    left out: the API rejects them), and the API answers for what it does not know."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        if key == "stop":
            out["stop_sequences"] = [value] if isinstance(value, str) else list(value)
        elif key == "user":
            out["metadata"] = {"user_id": str(value)}
        elif key == "parallel_tool_calls":
            if value is False and "tool_choice" in body:
                body["tool_choice"]["disable_parallel_tool_use"] = True
            elif value is False and "tools" in body:
                body["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
        else:
            out[key] = value
    return out


# --- the model ------------------------------------------------------------------------------------


class AnthropicChat(OnEndpoint, ChatModel):
    """A Claude model over the Messages API; `complete()` is `stream()` collected."""

    speaks_for = "anthropic"
    """The built-in provider whose endpoint a model built by hand (with no `endpoint`) uses."""

    def __init__(
        self,
        model: str,
        *,
        endpoint: Endpoint | None = None,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        http_client: httpx.AsyncClient | None = None,
        vision: bool | None = None,
    ) -> None:
        """`endpoint`: its provider's, as a row builds it; without one, Anthropic's built with
        `api_key` (`x-api-key`) or `auth_token` (a gateway's bearer token; None: each read
        from its variable at each request), `base_url`, `headers`, `timeout`, `max_retries`
        and `http_client`. `vision`: whether the model accepts images (None: Claude 3 and
        later do)."""
        self.name = model
        self.endpoint: Endpoint = endpoint or row(self.speaks_for).endpoint(
            model,
            api_key=api_key,
            keys={"ANTHROPIC_AUTH_TOKEN": auth_token},
            base_url=base_url,
            headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        self.vision = vision
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"AnthropicChat({self.name!r}, base_url={self.base_url!r})"

    def request_headers(self) -> dict[str, str]:
        return {
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
            **self.endpoint.auth_headers(),
        }

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        options = dict(request.options)
        if options.get("max_tokens") is None:
            options["max_tokens"] = self.max_tokens
        return messages_request(
            self.name,
            request.messages,
            tools=request.tools,
            tool_choice=request.tool_choice,
            cache=self.cache_prompt,
            **options,
        )

    cache_prompt = True
    """Whether requests mark prompt-cache breakpoints (`cache_breakpoints`): a cached prefix
    costs a tenth of its input price; set False for a gateway that refuses `cache_control`."""

    auth: httpx.Auth | None = None
    """Authentication that renews itself (Copilot's token when Copilot serves Claude); None: the
    key headers of `request_headers()`."""

    label = "Anthropic"
    """Who answered, as errors name it."""

    async def prepare_request(self, request: ModelRequest) -> tuple[str, dict[str, str]]:
        """The base URL and headers of the next request; a gateway in front of Claude (GitHub
        Copilot) overrides this to name its API and add its own headers."""
        return self.base_url, self.request_headers()

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Deltas as they arrive, then the complete message."""
        request = self.with_images(request)
        body = self.request_body(request)
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        auth = self.auth if self.auth is not None else httpx.USE_CLIENT_DEFAULT

        async def send() -> httpx.Response:
            base_url, headers = await self.prepare_request(request)
            client = self.endpoint.client(base_url)  # the administrator's policy, for this URL
            wire = client.build_request(
                "POST", f"{base_url}/v1/messages", content=content, headers=headers
            )
            return await client.send(wire, stream=True, auth=auth)

        async for event in stream_reply(
            send,
            MessagesStreamDecoder(),
            provider=self.label,
            where=self.base_url,
            sign_in_hint=self.sign_in_hint(),
            policy=self.retry,
            reach_hint=self.endpoint.reach_hint(),
        ):
            yield event

    async def aclose(self) -> None:
        await self.endpoint.aclose()

    def sign_in_hint(self) -> str:
        """What to do when the key was refused or is missing (its endpoint says)."""
        return self.endpoint.sign_in_hint()
