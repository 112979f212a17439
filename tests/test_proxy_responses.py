"""What a client gets back from the proxy, read by the official `openai` SDK as the oracle.

The SDK reads our bytes through an `httpx.MockTransport`: that only hands our encoder's output to
the SDK's real decoder; none of our own code is replaced.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion

from copilot_nb.events import ModelEvent, ModelResponse, Notice, ReasoningDelta, TextDelta
from copilot_nb.events import ToolCallDelta as Delta
from copilot_nb.messages import (
    AssistantMessage,
    ToolCall,
    ToolResult,
    Usage,
)
from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder
from copilot_nb.serve.openai.chat_request import ApiError, parse_chat_request
from copilot_nb.serve.openai.chat_response import ChunkEncoder, completion_body, sse
from copilot_nb.testing import ScriptedModel
from copilot_nb.testing.script import call, reply
from tests.proxy_request_bodies import CALL, READ

# --- what the client gets back: the official SDK as the oracle ----------------------------------

MODEL, COMPLETION_ID, CREATED = "gpt-4o", "chatcmpl-proxy1", 1_700_000_000
USAGE = Usage(input_tokens=12, output_tokens=30)
READ_CALL = ToolCall.from_raw(id="call_a", name="read_file", raw_arguments='{"path": "a.py"}')
GREP_CALL = ToolCall.from_raw(
    id="call_b", name="grep", raw_arguments='{"pattern": "x = \\\\d", "glob": "*.py"}'
)
TEXT = "Let me look at a.py — and then grep.\nDone ✓"


def sdk(respond: Callable[[httpx.Request], httpx.Response]) -> openai.OpenAI:
    transport = httpx.MockTransport(respond)
    return openai.OpenAI(
        api_key="x",
        base_url="http://proxy.test/v1",
        http_client=httpx.Client(transport=transport),
        max_retries=0,
    )


def streaming(pieces: Iterable[bytes]) -> openai.OpenAI:
    chunks = list(pieces)
    return sdk(
        lambda request: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter(chunks)
        )
    )


def encode(events: Iterable[ModelEvent], *, include_usage: bool = True) -> bytes:
    encoder = ChunkEncoder(
        model=MODEL, completion_id=COMPLETION_ID, created=CREATED, include_usage=include_usage
    )
    return encoder.start() + b"".join(encoder.event(e) for e in events) + encoder.done()


def streamed_reply() -> list[ModelEvent]:
    """What a model streams: reasoning, text in pieces, two calls whose arguments come in pieces."""
    final = AssistantMessage(
        text=TEXT,
        reasoning="Think.",
        tool_calls=(READ_CALL, GREP_CALL),
        finish_reason="tool_use",
        usage=USAGE,
    )
    return [
        Notice(text="retrying once"),
        ReasoningDelta(text="Thi"),
        ReasoningDelta(text="nk."),
        *(TextDelta(text=TEXT[i : i + 5]) for i in range(0, len(TEXT), 5)),
        TextDelta(text=""),
        Delta(index=0, id="call_a", name="read_file"),
        Delta(index=0, arguments='{"path"'),
        Delta(index=1, id="call_b", name="grep", arguments='{"pattern": '),
        Delta(index=0, arguments=': "a.py"}'),
        Delta(index=1, id="call_b", name="grep", arguments='"x = \\\\d", "glob": "*.py"}'),
        ModelResponse(message=final),
    ]


def create_stream(client: openai.OpenAI) -> dict[str, Any]:
    """Read a stream with `chat.completions.create(stream=True)`, gathering it by hand."""
    text, finish, usage = [], None, None
    calls: dict[int, dict[str, str]] = {}
    for chunk in client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
    ):
        assert (chunk.id, chunk.model, chunk.created, chunk.object) == (
            COMPLETION_ID,
            MODEL,
            CREATED,
            "chat.completion.chunk",
        )
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
            for part in choice.delta.tool_calls or ():
                entry = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += part.id or ""
                if part.function is not None:
                    entry["name"] += part.function.name or ""
                    entry["arguments"] += part.function.arguments or ""
    return {
        "text": "".join(text),
        "calls": [
            (c["id"], c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())
        ],
        "finish_reason": finish,
        "usage": usage.model_dump(exclude_none=True) if usage else None,
    }


def helper_stream(client: openai.OpenAI) -> dict[str, Any]:
    """Read a stream with the SDK's own accumulating helper, `chat.completions.stream()`."""
    with client.chat.completions.stream(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        completion = stream.get_final_completion()
    choice = completion.choices[0]
    return {
        "text": choice.message.content or "",
        "calls": [
            (c.id, c.function.name, json.loads(c.function.arguments))
            for c in choice.message.tool_calls or ()
        ],
        "finish_reason": choice.finish_reason,
        "usage": completion.usage.model_dump(exclude_none=True) if completion.usage else None,
    }


EXPECTED = {
    "text": TEXT,
    "calls": [
        ("call_a", "read_file", {"path": "a.py"}),
        ("call_b", "grep", {"pattern": "x = \\d", "glob": "*.py"}),
    ],
    "finish_reason": "tool_calls",
    "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
}


@pytest.mark.parametrize("read", [create_stream, helper_stream], ids=["create", "stream helper"])
def test_the_sdk_rebuilds_a_streamed_reply(read: Callable[[openai.OpenAI], dict[str, Any]]) -> None:
    assert read(streaming([encode(streamed_reply())])) == EXPECTED


def test_the_sdk_rebuilds_a_stream_delivered_one_byte_at_a_time() -> None:
    data = encode(streamed_reply())
    assert helper_stream(streaming(data[i : i + 1] for i in range(len(data)))) == EXPECTED


def test_the_stream_is_framed_as_openai_frames_it() -> None:
    events = encode(streamed_reply()).split(b"\n\n")
    assert events[-2:] == [b"data: [DONE]", b""]
    chunks = [json.loads(event.removeprefix(b"data: ")) for event in events[:-2]]
    compact = [b"data: " + json.dumps(chunk, separators=(",", ":")).encode() for chunk in chunks]
    assert compact == events[:-2]
    head = {
        "id": COMPLETION_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
    }
    assert chunks[0] == {
        **head,
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": ""},
                "logprobs": None,
                "finish_reason": None,
            }
        ],
    }
    assert chunks[1]["choices"][0]["delta"] == {"reasoning_content": "Thi"}
    tool_deltas = [
        c["choices"][0]["delta"]["tool_calls"]
        for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert tool_deltas == [
        [
            {
                "index": 0,
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": ""},
            }
        ],
        [{"index": 0, "function": {"arguments": '{"path"'}}],
        [
            {
                "index": 1,
                "id": "call_b",
                "type": "function",
                "function": {"name": "grep", "arguments": '{"pattern": '},
            }
        ],
        [{"index": 0, "function": {"arguments": ': "a.py"}'}}],
        [
            {"index": 1, "function": {"arguments": '"x = \\\\d", "glob": "*.py"}'}}
        ],  # id and name once
    ]
    assert chunks[-2] == {
        **head,
        "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}],
    }
    assert chunks[-1] == {**head, "choices": [], "usage": EXPECTED["usage"]}


def test_without_include_usage_there_is_no_usage_chunk() -> None:
    events = encode(streamed_reply(), include_usage=False).split(b"\n\n")
    last = json.loads(events[-3].removeprefix(b"data: "))
    assert last["choices"][0]["finish_reason"] == "tool_calls" and "usage" not in last
    assert create_stream(streaming([b"\n\n".join(events)]))["usage"] is None


def test_a_notice_and_an_empty_delta_send_nothing() -> None:
    encoder = ChunkEncoder(model=MODEL, completion_id=COMPLETION_ID, created=CREATED)
    assert encoder.event(Notice(text="retrying")) == b""
    assert encoder.event(TextDelta(text="")) == b""
    assert encoder.event(Delta(index=0, id="c", name="f")) != b""
    assert encoder.event(Delta(index=0)) == b""
    assert encoder.event(Delta(index=0, id="c", name="f")) == b""  # already sent


def test_a_reply_given_only_in_the_final_message_still_reaches_the_client() -> None:
    final = AssistantMessage(text="Hello.", tool_calls=(READ_CALL,), usage=USAGE)
    assert helper_stream(streaming([encode([ModelResponse(message=final)])])) == {
        "text": "Hello.",
        "calls": [("call_a", "read_file", {"path": "a.py"})],
        "finish_reason": "tool_calls",
        "usage": EXPECTED["usage"],
    }


def test_tool_calls_are_numbered_in_the_order_they_start() -> None:
    events: list[ModelEvent] = [
        Delta(index=3, id="call_b", name="grep", arguments="{}"),
        Delta(index=1, id="call_a", name="read_file", arguments="{}"),
        ModelResponse(message=AssistantMessage(tool_calls=(GREP_CALL, READ_CALL))),
    ]
    calls = create_stream(streaming([encode(events)]))["calls"]
    assert calls == [("call_b", "grep", {}), ("call_a", "read_file", {})]


def test_a_stream_error_reaches_the_sdk_as_an_api_error() -> None:
    encoder = ChunkEncoder(model=MODEL, completion_id=COMPLETION_ID, created=CREATED)
    failure = ApiError(
        "The upstream model failed: overloaded; try again.",
        status=502,
        type="upstream_error",
        code="upstream_529",
    )
    data = (
        encoder.start()
        + encoder.event(TextDelta(text="Partial"))
        + encoder.error(failure)
        + encoder.done()
    )
    assert encoder.error(failure) == sse(failure.body())
    with pytest.raises(openai.APIError) as caught:
        create_stream(streaming([data]))
    assert caught.value.message == "The upstream model failed: overloaded; try again."
    assert caught.value.body == failure.body()["error"]
    assert caught.value.code == "upstream_529"


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("length", "length"),
        ("refusal", "content_filter"),
        (None, "stop"),
        ("error", "stop"),
    ],
)
def test_finish_reasons_are_openais(ours: str | None, theirs: str) -> None:
    message = AssistantMessage(text="x", finish_reason=ours)
    completion = ChatCompletion.model_validate(
        completion_body(message, model=MODEL, completion_id=COMPLETION_ID, created=CREATED)
    )
    assert completion.choices[0].finish_reason == theirs
    encoder = ChunkEncoder(model=MODEL, completion_id=COMPLETION_ID, created=CREATED)
    assert (
        create_stream(
            streaming(
                [encoder.start() + encoder.event(ModelResponse(message=message)) + encoder.done()]
            )
        )["finish_reason"]
        == theirs
    )


def test_a_completion_is_an_openai_chat_completion() -> None:
    message = AssistantMessage(
        text="", reasoning="Think.", tool_calls=(READ_CALL, GREP_CALL), usage=USAGE
    )
    wire = completion_body(message, model=MODEL, completion_id=COMPLETION_ID, created=CREATED)
    assert wire == {
        "id": COMPLETION_ID,
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "reasoning_content": "Think.",
                    "tool_calls": [
                        {
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                        },
                        {
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "grep", "arguments": GREP_CALL.raw_arguments},
                        },
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": EXPECTED["usage"],
    }
    completion = ChatCompletion.model_validate(wire)
    calls = completion.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == EXPECTED[
        "calls"
    ]


def test_the_sdk_reads_a_completion_through_its_client() -> None:
    message = AssistantMessage(text=TEXT, finish_reason="stop")  # no usage reported: zeros
    wire = completion_body(message, model=MODEL, completion_id=COMPLETION_ID, created=CREATED)
    client = sdk(lambda request: httpx.Response(200, json=wire))
    completion = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    assert completion.choices[0].message.content == TEXT
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.total_tokens == 0


def test_arguments_without_raw_text_are_sent_as_json() -> None:
    bare = ToolCall(id="c", name="f", arguments={"a": 1})
    empty = ToolCall(id="d", name="g", arguments={})
    message = AssistantMessage(tool_calls=(bare, empty))
    calls = completion_body(message, model=MODEL, completion_id="x", created=0)["choices"][0][
        "message"
    ]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"a": 1}', "{}"]


async def test_a_scripted_model_streams_through_the_encoder_into_our_own_decoder() -> None:
    """What the proxy sends, the OpenAI client of copilot_nb reads back as the same message."""
    turn = reply("Reading it now.", call("read_file", path="a.py"), reasoning="Plan.", usage=USAGE)
    model = ScriptedModel([turn])
    streamed = [event async for event in model.stream([{"role": "user", "content": "hi"}])]
    decoder = ChatCompletionsDecoder()
    decoder.feed(encode(streamed))
    message = decoder.close()
    original = streamed[-1]
    assert isinstance(original, ModelResponse)
    assert (message.text, message.reasoning, message.finish_reason) == (
        "Reading it now.",
        "Plan.",
        "tool_calls",
    )
    assert message.tool_calls == original.message.tool_calls
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 30)


def test_what_the_sdk_sends_is_accepted() -> None:
    """The official SDK's own request bodies (typed tools, a named tool_choice, stream options)
    parse into the request they mean."""
    sent: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=encode(streamed_reply())
        )

    client = sdk(respond)
    list(
        client.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": "Read a.py"},
                {"role": "assistant", "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "call_1", "content": "x = 1"},
            ],
            tools=[READ],
            tool_choice={"type": "function", "function": {"name": "read_file"}},
            stream=True,
            stream_options={"include_usage": True},
            max_completion_tokens=256,
            temperature=0,
            extra_body={"use_notebook_tools": False},
        )
    )
    request = parse_chat_request(sent[0], models=[MODEL])
    assert request.messages[-1] == ToolResult(
        tool_call_id="call_1", name="read_file", content="x = 1"
    )
    assert (request.tool_choice, request.stream, request.include_usage) == ("read_file", True, True)
    assert request.options == {"max_tokens": 256, "temperature": 0}
    assert [tool.name for tool in request.tools] == ["read_file"]
