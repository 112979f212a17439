"""More programs users point at the proxy (issue 35, "real clients as tests"): LiteLLM with the
proxy as an OpenAI-compatible base, and the `fastmcp` client at its `/mcp` with the token.

LiteLLM fetches a model-cost map from the network when imported unless told to use the copy it
ships (`LITELLM_LOCAL_MODEL_COST_MAP`); the network guard would fail the test on that fetch."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.proxy_fixtures import MODEL, proxy_for

pytestmark = pytest.mark.external

__all__ = ["proxy_for"]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
def litellm() -> Any:
    """LiteLLM, imported with its bundled cost map and no telemetry: nothing leaves loopback."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_TELEMETRY"] = "False"
    import litellm

    litellm.telemetry = False
    return litellm


def through(proxy: Any) -> dict[str, Any]:
    """LiteLLM's arguments for the proxy: the `openai/` prefix picks its OpenAI-compatible route."""
    return {"model": f"openai/{MODEL}", "api_base": f"{proxy.url}/v1", "api_key": proxy.token}


def test_litellm_completes_and_streams_a_reply_with_its_usage(proxy_for, litellm):
    proxy = proxy_for([reply("Hello from the proxy."), reply("Streamed hello.")])
    messages = [{"role": "user", "content": "Say hello"}]
    whole = litellm.completion(messages=messages, **through(proxy))
    assert whole.choices[0].message.content == "Hello from the proxy."
    assert whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens > 0
    chunks = list(
        litellm.completion(
            messages=messages, stream=True, stream_options={"include_usage": True}, **through(proxy)
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Streamed hello."
    )
    assert proxy.upstream.requests[0].messages[-1]["content"] == "Say hello"


async def test_litellm_gets_a_tool_call_and_sends_its_result_back(proxy_for, litellm):
    proxy = proxy_for([reply("", call("get_weather", city="Oslo")), reply("It rains.")])
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = await litellm.acompletion(messages=messages, tools=[WEATHER], **through(proxy))
    asked = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert (asked.function.name, json.loads(asked.function.arguments)) == (
        "get_weather",
        {"city": "Oslo"},
    )
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": asked.id, "content": "rain"},
    ]
    second = await litellm.acompletion(messages=messages, tools=[WEATHER], **through(proxy))
    assert second.choices[0].message.content == "It rains."
    assert proxy.upstream.requests[1].tool_results == {asked.id: "rain"}


async def test_the_fastmcp_client_lists_and_calls_the_proxys_tools_with_its_token(proxy_for, root):
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    (root / "a.txt").write_text("alpha\n")
    proxy = proxy_for([], allow_execution=True)
    transport = StreamableHttpTransport(f"{proxy.url}/mcp", auth=proxy.token)
    async with Client(transport) as client:
        names = [tool.name for tool in await client.list_tools()]
        read = await client.call_tool("read_file", {"path": "a.txt"})
        write = await client.call_tool(
            "write_file", {"path": "b.txt", "content": "b"}, raise_on_error=False
        )
    assert {"read_file", "write_file"} <= set(names)
    assert "alpha" in read.content[0].text and not read.is_error
    assert write.is_error and "nobody can approve it" in write.content[0].text
    assert not (root / "b.txt").exists()


async def test_the_fastmcp_client_without_the_token_is_told_to_pass_it(proxy_for):
    """No OAuth flow starts (the proxy names no authorization server): the user reads why."""
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    proxy = proxy_for([])
    with pytest.raises(Exception) as refused:
        async with Client(StreamableHttpTransport(f"{proxy.url}/mcp")) as client:
            await client.list_tools()
    said = str(refused.value)
    assert "No API key was sent" in said and "Authorization: Bearer <token>" in said, said
