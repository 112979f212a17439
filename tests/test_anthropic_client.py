"""AnthropicChat talks to a real loopback HTTP server speaking Anthropic's exact bytes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import anthropic
import pytest

from copilot_nb.errors import AuthError, ModelConnectionError, ModelHTTPError, StreamError
from copilot_nb.events import ModelEvent, ModelResponse, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.messages import (
    UserMessage,
)
from copilot_nb.models.anthropic.chat import AnthropicChat, messages_request
from copilot_nb.models.transport import RetryPolicy
from copilot_nb.testing.anthropic_wire import (
    anthropic_error_body,
    anthropic_sse_event,
    anthropic_sse_events,
    fake_signature,
)
from copilot_nb.testing.script import ScriptedTurn, call
from copilot_nb.testing.server import LoopbackHTTPServer
from tests.wire_samples import TOOLS, check_snapshot, conversation


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Loopback:
    """A loopback HTTP server on 127.0.0.1 answering each POST with the next queued reply."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.received: list[Received] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                reply = owner.replies.pop(0)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in reply.chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client stopped reading after an error

        self.httpd = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def stream(self, turn: ScriptedTurn) -> None:
        self.replies.append(
            Reply(chunks=anthropic_sse_events(turn, model="claude-test", message_id="msg_1"))
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Loopback]:
    loopback = Loopback()
    yield loopback
    loopback.close()


@pytest.fixture
def model(server: Loopback) -> AnthropicChat:
    return AnthropicChat("claude-test", api_key="sk-ant-test", base_url=server.url, max_tokens=1024)


async def drain(model: AnthropicChat, *args: Any, **kwargs: Any) -> list[ModelEvent]:
    return [event async for event in model.stream(*args, **kwargs)]


async def test_request_payload_is_pinned(server: Loopback, model: AnthropicChat) -> None:
    """The conversation goes out as Anthropic expects; the pinned snapshot makes changes visible."""
    server.stream(ScriptedTurn(text="ok"))
    await drain(
        model,
        conversation(),
        tools=TOOLS,
        tool_choice="read_file",
        stop_sequences=["</answer>"],
        top_k=None,
    )

    (request,) = server.received
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    payload = request.json
    check_snapshot(payload)
    assert payload == messages_request(
        "claude-test",
        conversation(),
        tools=TOOLS,
        tool_choice="read_file",
        max_tokens=1024,
        stop_sequences=["</answer>"],
        cache=True,
    )
    assert "null" not in request.body.decode()


async def test_official_sdk_sends_the_same_request(server: Loopback, model: AnthropicChat) -> None:
    """The official SDK, given our payload, puts the same JSON and version header on the wire."""
    server.stream(ScriptedTurn(text="ok"))
    server.stream(ScriptedTurn(text="ok"))
    await drain(model, conversation(), tools=TOOLS, tool_choice="auto")
    ours = server.received[0]

    payload = dict(ours.json)
    del payload["stream"]
    client = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=server.url, max_retries=0)
    async with await client.messages.create(**payload, stream=True) as stream:
        async for _ in stream:
            pass
    await client.close()
    theirs = server.received[1]

    assert theirs.path == ours.path
    assert theirs.json == ours.json
    assert theirs.headers["content-type"] == ours.headers["content-type"]
    # anthropic 2.12 itself authenticates with `Authorization: Bearer` and a newer
    # anthropic-version; we send the documented `x-api-key` + 2023-06-01, so only the body
    # is compared.


async def test_reply_streams_as_events(server: Loopback, model: AnthropicChat) -> None:
    turn = ScriptedTurn(
        text="Héllo wörld — 你好 🌍, the mean is 3.5",
        reasoning="Compute the mean, then answer.",
        tool_calls=(call("read_file", id="toolu_a", path="ü.py"), call("run_tests", id="toolu_b")),
        chunk_size=3,
    )
    server.stream(turn)
    events = await drain(model, [UserMessage(content="hi")], tools=TOOLS)

    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == turn.text
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == turn.reasoning
    starts = [(e.index, e.id, e.name) for e in events if isinstance(e, ToolCallDelta) and e.id]
    assert starts == [(0, "toolu_a", "read_file"), (1, "toolu_b", "run_tests")]
    assert isinstance(events[-1], ModelResponse)
    message = events[-1].message
    assert message.text == turn.text
    assert message.reasoning == turn.reasoning
    assert message.reasoning_signature == fake_signature(turn.reasoning)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("toolu_a", "read_file", {"path": "ü.py"}),
        ("toolu_b", "run_tests", {}),
    ]
    assert message.finish_reason == "tool_use"
    assert message.usage is not None and message.usage.input_tokens == 10


async def test_complete_collects_the_stream(server: Loopback, model: AnthropicChat) -> None:
    server.stream(ScriptedTurn(text="Done.", finish_reason="stop"))
    message = await model.complete([{"role": "user", "content": "hi"}])
    assert message.text == "Done."
    assert message.tool_calls == ()
    assert message.finish_reason == "end_turn"


async def test_max_tokens_none_keeps_the_default(server: Loopback, model: AnthropicChat) -> None:
    server.stream(ScriptedTurn(text="ok"))
    await model.complete([UserMessage(content="hi")], max_tokens=None)
    assert server.received[0].json["max_tokens"] == 1024


async def test_configured_from_the_environment(
    server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url + "/")
    server.stream(ScriptedTurn(text="ok"))
    assert (await AnthropicChat("claude-test").complete([UserMessage(content="hi")])).text == "ok"
    assert server.received[0].headers["x-api-key"] == "sk-ant-env"


async def test_an_auth_token_is_sent_as_a_bearer_token(
    server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token")
    server.stream(ScriptedTurn(text="ok"))
    await AnthropicChat("claude-test", base_url=server.url).complete([UserMessage(content="hi")])
    assert server.received[0].headers["authorization"] == "Bearer gateway-token"
    assert "x-api-key" not in server.received[0].headers


async def test_a_refused_key_says_to_set_anthropic_api_key(
    server: Loopback, model: AnthropicChat
) -> None:
    server.replies.append(
        Reply(
            401,
            [anthropic_error_body("authentication_error", "invalid x-api-key")],
            "application/json",
        )
    )
    with pytest.raises(AuthError) as caught:
        await model.complete([UserMessage(content="hi")])
    assert caught.value.status == 401
    assert "invalid x-api-key" in str(caught.value)
    assert "ANTHROPIC_API_KEY" in str(caught.value)


async def test_a_missing_key_says_it_is_not_set(
    server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    server.replies.append(
        Reply(
            401,
            [anthropic_error_body("authentication_error", "x-api-key header is required")],
            "application/json",
        )
    )
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY is not set"):
        await AnthropicChat("claude-test", base_url=server.url).complete(
            [UserMessage(content="hi")]
        )
    assert "x-api-key" not in server.received[0].headers


async def test_overloaded_is_retried_then_an_http_error_with_status_and_message(
    server: Loopback, model: AnthropicChat
) -> None:
    model.retry = RetryPolicy(max_retries=2, initial_delay=0.01)
    for _ in range(3):
        server.replies.append(
            Reply(529, [anthropic_error_body("overloaded_error", "Overloaded")], "application/json")
        )
    with pytest.raises(ModelHTTPError) as caught:
        await model.complete([UserMessage(content="hi")])
    assert len(server.received) == 3
    assert not isinstance(caught.value, AuthError)
    assert caught.value.status == 529
    assert "Overloaded" in str(caught.value)
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


async def test_error_event_mid_stream_is_a_stream_error(
    server: Loopback, model: AnthropicChat
) -> None:
    events = anthropic_sse_events(
        ScriptedTurn(text="partial answer"), model="claude-test", message_id="m"
    )
    error = json.loads(anthropic_error_body("overloaded_error", "Overloaded"))
    server.replies.append(Reply(chunks=[*events[:4], anthropic_sse_event("error", error)]))
    seen: list[ModelEvent] = []
    with pytest.raises(StreamError, match="Overloaded") as caught:
        async for event in model.stream([UserMessage(content="hi")]):
            seen.append(event)
    assert caught.value.body == error
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "partial "


async def test_error_event_in_the_same_read_as_text_still_streams_the_text(
    server: Loopback, model: AnthropicChat
) -> None:
    events = anthropic_sse_events(
        ScriptedTurn(text="partial answer"), model="claude-test", message_id="m"
    )
    error = json.loads(anthropic_error_body("overloaded_error", "Overloaded"))
    server.replies.append(
        Reply(chunks=[b"".join([*events[:4], anthropic_sse_event("error", error)])])
    )
    seen: list[ModelEvent] = []
    with pytest.raises(StreamError):
        async for event in model.stream([UserMessage(content="hi")]):
            seen.append(event)
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "partial "


async def test_a_stream_cut_short_is_a_connection_error(
    server: Loopback, model: AnthropicChat
) -> None:
    events = anthropic_sse_events(
        ScriptedTurn(text="partial answer"), model="claude-test", message_id="m"
    )
    server.replies.append(Reply(chunks=events[:5]))
    with pytest.raises(ModelConnectionError, match="ended before the reply was complete"):
        await model.complete([UserMessage(content="hi")])


async def test_an_unreachable_server_is_a_connection_error() -> None:
    loopback = Loopback()
    url = loopback.url
    loopback.close()
    with pytest.raises(ModelConnectionError, match="connection to"):
        await AnthropicChat("claude-test", api_key="k", base_url=url).complete(
            [UserMessage(content="hi")]
        )


async def test_an_overloaded_error_mid_stream_is_asked_again_by_the_agent(
    server: Loopback, model: AnthropicChat, tmp_path
) -> None:
    from copilot_nb import Agent
    from copilot_nb.events import Done, Notice

    events = anthropic_sse_events(
        ScriptedTurn(text="partial answer"), model="claude-test", message_id="m"
    )
    error = json.loads(anthropic_error_body("overloaded_error", "Overloaded"))
    server.replies.append(Reply(chunks=[*events[:4], anthropic_sse_event("error", error)]))
    server.stream(ScriptedTurn(text="Complete answer."))
    agent = Agent(model=model, workspace=tmp_path)
    seen = [e async for e in agent.run("hi")]
    assert any(isinstance(e, Notice) and "Overloaded" in e.text for e in seen)
    assert isinstance(seen[-1], Done) and seen[-1].text == "Complete answer."
    assert len(server.received) == 2


async def test_an_invalid_request_error_mid_stream_is_not_retried(
    server: Loopback, model: AnthropicChat, tmp_path
) -> None:
    from copilot_nb import Agent
    from copilot_nb.events import Failed

    events = anthropic_sse_events(ScriptedTurn(text="partial"), model="claude-test", message_id="m")
    error = json.loads(anthropic_error_body("invalid_request_error", "Bad tool schema"))
    server.replies.append(Reply(chunks=[*events[:3], anthropic_sse_event("error", error)]))
    seen = [e async for e in Agent(model=model, workspace=tmp_path).run("hi")]
    assert isinstance(seen[-1], Failed) and "Bad tool schema" in seen[-1].error
    assert len(server.received) == 1
