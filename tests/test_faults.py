"""Faults a real provider produces: rate limits, outages, refused tools, broken streams, long chats."""

from __future__ import annotations

import socket

import httpx
import pytest

from copilot_nb import Agent, AuthError, ModelConnectionError, ModelHTTPError, OpenAIChat
from copilot_nb.errors import ContextLengthError
from copilot_nb.events import Done, Failed, ModelResponse, Notice
from copilot_nb.models.providers import row
from copilot_nb.models.transport import RetryPolicy, server_retry_after
from copilot_nb.testing import call, fail, reply

FAST = RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.05)
HI = [{"role": "user", "content": "hi"}]
TOOL = {"name": "list_directory", "description": "List.", "parameters": {"type": "object"}}


def fast_model(server, **options):
    model = server.model(**options)
    model.retry = FAST
    return model


async def test_429_waits_as_long_as_retry_after_asks_then_succeeds(serve, retry_sleeps):
    server = serve(
        [fail(429, "Rate limit reached for gpt-4o", headers={"retry-after": "0.3"}), reply("ok")]
    )
    model = fast_model(server)
    events = [e async for e in model.stream(HI)]
    assert retry_sleeps.waits == [0.3]
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert "429" in notice.text and "Rate limit reached" in notice.text
    assert "retrying in 0.3 s (1/2)" in notice.text
    assert isinstance(events[-1], ModelResponse) and events[-1].message.text == "ok"


async def test_retry_after_ms_wins_over_retry_after(serve, retry_sleeps):
    server = serve(
        [fail(503, "busy", headers={"retry-after-ms": "50", "retry-after": "30"}), reply("ok")]
    )
    model = fast_model(server)
    assert (await model.complete(HI)).text == "ok"
    assert retry_sleeps.waits == [0.05]


async def test_5xx_is_retried_max_retries_times_then_raised(serve):
    server = serve([fail(503, "Service Unavailable")] * 3)
    model = fast_model(server)
    with pytest.raises(ModelHTTPError) as info:
        await model.complete(HI)
    assert info.value.status == 503
    assert len(server.requests) == 3
    server.assert_complete()


async def test_a_501_is_not_retried(serve):
    """llama-server's `/infill` for a model without fill-in-the-middle tokens: never later."""
    server = serve([fail(501, "This server does not support infill.")])
    with pytest.raises(ModelHTTPError) as info:
        await fast_model(server).complete(HI)
    assert info.value.status == 501
    assert len(server.requests) == 1


async def test_a_500_that_repeats_its_body_is_the_answer_not_a_hiccup(serve):
    server = serve([fail(500, "Failed to parse tool call arguments")] * 3)
    with pytest.raises(ModelHTTPError, match="Failed to parse tool call"):
        await fast_model(server).complete(HI)
    assert len(server.requests) == 2


async def test_a_500_that_changes_is_retried_and_can_pass(serve):
    server = serve([fail(500, "worker 1 crashed"), fail(500, "worker 2 crashed"), reply("ok")])
    assert (await fast_model(server).complete(HI)).text == "ok"
    assert len(server.requests) == 3


async def test_no_retry_storm_when_the_server_asks_for_an_hour(serve, retry_sleeps):
    server = serve([fail(429, "quota exceeded", headers={"retry-after": "3600"})])
    model = fast_model(server)
    with pytest.raises(ModelHTTPError, match="quota exceeded"):
        await model.complete(HI)
    assert retry_sleeps.waits == []
    assert len(server.requests) == 1


async def test_client_errors_are_not_retried(serve):
    server = serve([fail(400, "Invalid 'messages[0].role'")])
    with pytest.raises(ModelHTTPError):
        await fast_model(server).complete(HI)
    assert len(server.requests) == 1


async def test_connection_refused_is_retried_then_a_connection_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChat("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    model.retry = FAST
    events = []
    with pytest.raises(ModelConnectionError, match="ConnectError"):
        async for event in model.stream(HI):
            events.append(event)
    assert [type(e) for e in events] == [Notice, Notice]


async def test_context_length_error_says_so_plainly(serve):
    server = serve(
        [
            fail(
                400,
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.",
            )
        ]
    )
    with pytest.raises(ContextLengthError) as info:
        await fast_model(server).complete(HI)
    assert "too long for this model's context window" in str(info.value)
    assert "--new" in str(info.value)


async def test_a_model_that_rejects_tools_is_asked_again_without_them(serve):
    server = serve(
        [
            fail(400, "registry.ollama.ai/library/gemma2:latest does not support tools"),
            reply("plain answer"),
        ]
    )
    model = fast_model(server, endpoint=row("ollama").endpoint("scripted", base_url=server.url))
    events = [e async for e in model.stream(HI, tools=[TOOL])]
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert "does not accept tools" in notice.text
    assert events[-1].message.text == "plain answer"
    first, second = server.requests
    assert "tools" in first.body and "tools" not in second.body


async def test_a_401_is_not_retried_but_the_clients_auth_may_renew_inside_the_request(serve):
    class Renewing(httpx.Auth):
        """An auth whose credentials expire, as a user's own http_client may carry."""

        renewals = 0

        def auth_flow(self, request):
            request.headers["Authorization"] = f"Bearer key-{self.renewals}"
            response = yield request
            if response.status_code == 401:
                self.renewals += 1
                request.headers["Authorization"] = f"Bearer key-{self.renewals}"
                yield request

    server = serve(
        [fail(401, "token expired"), reply("ok"), fail(401, "no"), fail(401, "still no")]
    )
    auth = Renewing()
    async with httpx.AsyncClient(auth=auth) as client:
        model = OpenAIChat("m", base_url=server.url, api_key="", http_client=client)
        model.retry = FAST
        assert (await model.complete(HI)).text == "ok"
        assert server.requests[1].headers["Authorization"] == "Bearer key-1"
        with pytest.raises(AuthError):
            await model.complete(HI)
    assert auth.renewals == 2
    assert len(server.requests) == 4, "the transport itself never repeats a 401"


def test_retry_after_parsing_and_backoff_bounds():
    assert server_retry_after(httpx.Headers({"retry-after": "2"})) == 2.0
    assert server_retry_after(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    assert (
        server_retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    )
    assert server_retry_after(httpx.Headers({})) is None
    policy = RetryPolicy(initial_delay=0.5, max_delay=8.0)
    for attempt in range(10):
        delay = policy.backoff(attempt)
        assert 0 < delay <= min(8.0, 0.5 * 2**attempt)


async def test_a_stream_broken_mid_reply_is_asked_again_once(serve, tmp_path):
    server = serve([reply("half an ans" * 5, chunk_size=3, break_after=4), reply("Whole answer.")])
    agent = Agent(model=fast_model(server), workspace=tmp_path)
    events = [e async for e in agent.run("hi")]
    assert any(isinstance(e, Notice) and "asking again" in e.text for e in events)
    assert isinstance(events[-1], Done) and events[-1].text == "Whole answer."
    assert [m["role"] for m in server.requests[1].messages] == ["system", "user"]


async def test_a_stream_that_keeps_breaking_fails_with_a_valid_conversation(serve, tmp_path):
    server = serve(
        [
            reply("", call("list_directory", id="l1")),
            reply("broken " * 20, chunk_size=4, break_after=4),
            reply("broken " * 20, chunk_size=4, break_after=4),
            reply("Recovered."),
        ]
    )
    agent = Agent(model=fast_model(server), workspace=tmp_path)
    events = [e async for e in agent.run("go")]
    assert isinstance(events[-1], Failed)
    assert "before the reply was complete" in events[-1].error
    assert await agent.ask("again") == "Recovered."
    roles = [m["role"] for m in server.requests[-1].messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
