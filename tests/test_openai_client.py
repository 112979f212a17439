"""OpenAIChat against a real loopback HTTP server speaking Chat Completions SSE."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from copilot_nb import AuthError, ModelConnectionError, ModelHTTPError, OpenAIChat
from copilot_nb.events import ModelResponse, TextDelta, ToolCallDelta
from copilot_nb.messages import ToolSpec
from copilot_nb.testing import call, fail, reply

SNAPSHOTS = Path(__file__).parent / "data" / "snapshots"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


async def test_streams_text_deltas_then_the_complete_message(serve):
    server = serve([reply("Hello, notebook! ✨ Ünïcode works.", chunk_size=3)])
    model = server.model()
    events = [e async for e in model.stream([{"role": "user", "content": "hi"}])]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5
    assert "".join(deltas) == "Hello, notebook! ✨ Ünïcode works."
    final = events[-1]
    assert isinstance(final, ModelResponse)
    assert final.message.text == "Hello, notebook! ✨ Ünïcode works."
    assert final.message.finish_reason == "stop"
    assert final.message.usage is not None and final.message.usage.input_tokens == 10
    await model.aclose()


async def test_complete_returns_parsed_parallel_tool_calls(serve):
    server = serve(
        [
            reply(
                "Checking both.",
                call("get_weather", id="call_a", city="Paris"),
                call("get_weather", id="call_b", city="Zürich"),
            )
        ]
    )
    model = server.model()
    message = await model.complete([{"role": "user", "content": "weather?"}], tools=[WEATHER])
    assert message.text == "Checking both."
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_weather", {"city": "Zürich"}),
    ]
    assert message.finish_reason == "tool_calls"
    await model.aclose()


async def test_tool_call_deltas_are_streamed(serve):
    server = serve([reply("", call("get_weather", id="call_a", city="Paris"), chunk_size=2)])
    model = server.model()
    events = [e async for e in model.stream([{"role": "user", "content": "x"}], tools=[WEATHER])]
    pieces = [e for e in events if isinstance(e, ToolCallDelta)]
    assert pieces[0].id == "call_a" and pieces[0].name == "get_weather"
    assert "".join(p.arguments for p in pieces) == '{"city": "Paris"}'
    await model.aclose()


async def test_request_body_is_pinned_and_never_sends_null_tools(serve):
    server = serve([reply("a"), reply("b")])
    model = server.model()
    conversation = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    spec = ToolSpec(
        name="get_weather",
        description="Weather for a city.",
        parameters=WEATHER["function"]["parameters"],
    )
    await model.complete(conversation, tools=[spec], tool_choice="get_weather", temperature=0)
    await model.complete([{"role": "user", "content": "no tools"}])
    with_tools, without_tools = (r.body for r in server.requests)
    snapshot = SNAPSHOTS / "openai_request.json"
    assert with_tools == json.loads(snapshot.read_text())
    assert "tools" not in without_tools and "tool_choice" not in without_tools
    assert None not in without_tools.values()
    await model.aclose()


async def test_configured_from_the_environment_like_the_official_sdk(serve, monkeypatch):
    server = serve([reply("ok")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    model = OpenAIChat("gpt-4o")
    assert (await model.complete([{"role": "user", "content": "hi"}])).text == "ok"
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-test-123"
    assert server.requests[0].body["model"] == "gpt-4o"
    await model.aclose()


async def test_401_says_how_to_sign_in(serve):
    server = serve([fail(401, "Incorrect API key provided: sk-wrong.")])
    model = server.model()
    with pytest.raises(AuthError) as info:
        await model.complete([{"role": "user", "content": "hi"}])
    assert info.value.status == 401
    assert "Incorrect API key provided" in str(info.value)
    assert "OPENAI_API_KEY" in str(info.value)
    await model.aclose()


async def test_http_error_carries_status_and_provider_message(serve):
    server = serve([fail(400, "This model's maximum context length is 128000 tokens.")])
    model = server.model()
    with pytest.raises(ModelHTTPError) as info:
        await model.complete([{"role": "user", "content": "hi"}])
    assert info.value.status == 400
    assert "maximum context length" in str(info.value)
    assert info.value.body["error"]["message"].startswith("This model's")
    await model.aclose()


async def test_unreachable_server_is_a_connection_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChat("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="x")
    with pytest.raises(ModelConnectionError, match="connection to"):
        await model.complete([{"role": "user", "content": "hi"}])


async def test_a_stream_cut_midway_is_a_connection_error_not_a_short_answer(serve):
    server = serve([reply("This answer will never finish " * 5, chunk_size=4, break_after=6)])
    model = server.model()
    with pytest.raises(ModelConnectionError, match="before the reply was complete"):
        await model.complete([{"role": "user", "content": "hi"}])
    await model.aclose()


async def test_same_model_object_works_from_two_event_loops(serve):
    import asyncio

    server = serve([reply("one"), reply("two")])
    model = server.model()
    first = await model.complete([{"role": "user", "content": "1"}])
    loop = asyncio.new_event_loop()
    try:
        other = await asyncio.to_thread(
            loop.run_until_complete, model.complete([{"role": "user", "content": "2"}])
        )
    finally:
        loop.close()
    assert (first.text, other.text) == ("one", "two")


async def test_a_surrogate_pair_escaped_over_two_chunks_comes_back_as_its_character(serve):
    # A provider that escapes non-ASCII (`"\ud83d"` then `"\ude00"`) can split an emoji's pair
    # between two chunks; each half alone decodes to a surrogate that UTF-8 cannot encode, so
    # the reply could be neither sent back nor saved.
    text = "ok \ud83d\ude00 then a lone \ud800."
    raw = '{"note": "\ud83d\ude00"}'
    server = serve([reply(text, call("write_note", raw=raw), chunk_size=1)])
    model = server.model()
    message = await model.complete([{"role": "user", "content": "hi"}])
    assert message.text == "ok 😀 then a lone \ufffd."
    assert message.text.encode("utf-8")
    (note,) = message.tool_calls
    assert note.arguments == {"note": "😀"}
    assert note.raw_arguments.encode("utf-8")
    await model.aclose()
