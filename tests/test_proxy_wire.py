"""The proxy's wire layer: what a client may send (checked, with OpenAI's error shape) and what it
gets back, read by the official `openai` SDK as the oracle.

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
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    UserMessage,
)
from copilot_nb.models.openai_stream import ChatCompletionsDecoder
from copilot_nb.serve.chat_request import ApiError, ChatRequest, parse_chat_request
from copilot_nb.serve.chat_response import ChunkEncoder, completion_body, sse
from copilot_nb.testing import ScriptedModel
from copilot_nb.testing.script import call, reply

READ = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
WRITE = {"type": "function", "function": {"name": "write_file"}}
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
}
ASKED = {"role": "assistant", "content": None, "tool_calls": [CALL]}


def body(**fields: Any) -> dict[str, Any]:
    """A valid request, with `fields` changed (None removes one)."""
    base: dict[str, Any] = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def chat(*messages: Any, **fields: Any) -> dict[str, Any]:
    """A request whose conversation is a user's "hi" and then `messages` (from messages[1])."""
    return body(messages=[{"role": "user", "content": "hi"}, *messages], **fields)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def with_call(**changes: Any) -> dict[str, Any]:
    """An assistant message (messages[1]) whose one tool call has `changes` (None removes)."""
    function = {**CALL["function"], **changes.pop("function", {})}
    entry = {**CALL, "function": {k: v for k, v in function.items() if v is not None}, **changes}
    return chat(
        {"role": "assistant", "tool_calls": [{k: v for k, v in entry.items() if v is not None}]}
    )


def tool_fn(**function: Any) -> dict[str, Any]:
    return {"type": "function", "function": function}


MISSING = "missing_required_parameter"
TYPE = "invalid_type"
VALUE = "invalid_value"

# (id, body, param, code, a piece of the message); every one is a 400 invalid_request_error.
REFUSED: list[tuple[str, Any, str | None, str, str]] = [
    ("body a list", [], None, TYPE, "The body is an array; send a JSON object"),
    ("body a string", "hi", None, TYPE, "The body is a string"),
    ("no model", body(model=None), "model", MISSING, "Missing required parameter: 'model'"),
    ("model a number", body(model=4), "model", TYPE, "but got an integer"),
    ("model empty", body(model=""), "model", TYPE, "but got an empty string"),
    ("no messages", body(messages=None), "messages", MISSING, "send the conversation"),
    ("messages an object", body(messages={}), "messages", TYPE, "an array of message objects"),
    ("messages empty", body(messages=[]), "messages", "empty_array", "send at least one message"),
    ("message a string", body(messages=["hi"]), "messages[0]", TYPE, "but got a string"),
    ("no role", body(messages=[{"content": "hi"}]), "messages[0].role", MISSING, "who speaks"),
    ("unknown role", chat(user("a"), {"role": "robot"}), "messages[2].role", VALUE, "'robot'"),
    ("function role", chat({"role": "function"}), "messages[1].role", VALUE, "'tool'"),
    ("content a number", chat(user(5)), "messages[1].content", TYPE, "got an integer"),
    ("no content", chat({"role": "user"}), "messages[1].content", MISSING, "text as a string"),
    ("user content null", chat(user(None)), "messages[1].content", TYPE, "null is only for"),
    (
        "assistant null without calls",
        chat({"role": "assistant", "content": None}),
        "messages[1].content",
        TYPE,
        "null is only for an assistant message with tool_calls",
    ),
    (
        "an image part",
        chat(user([{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {}}])),
        "messages[1].content[1].type",
        "unsupported_value",
        "images are not supported by the proxy yet",
    ),
    (
        "an audio part",
        chat(user([{"type": "input_audio"}])),
        "messages[1].content[0].type",
        "unsupported_value",
        "audio is not supported",
    ),
    (
        "a video part",
        chat(user([{"type": "video"}])),
        "messages[1].content[0].type",
        VALUE,
        "'text'",
    ),
    ("a part a string", chat(user(["hi"])), "messages[1].content[0]", TYPE, '{"type": "text"'),
    (
        "part text a number",
        chat(user([{"type": "text", "text": 1}])),
        "messages[1].content[0].text",
        TYPE,
        "expected a string",
    ),
    (
        "tool_calls an object",
        chat({"role": "assistant", "tool_calls": CALL}),
        "messages[1].tool_calls",
        TYPE,
        "an array of tool calls",
    ),
    ("call without id", with_call(id=None), "messages[1].tool_calls[0].id", MISSING, "copy the id"),
    ("call id empty", with_call(id=""), "messages[1].tool_calls[0].id", TYPE, "empty string"),
    (
        "call of a custom type",
        with_call(type="custom"),
        "messages[1].tool_calls[0].type",
        VALUE,
        "",
    ),
    (
        "call without function",
        chat({"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}),
        "messages[1].tool_calls[0].function",
        MISSING,
        "needs a 'function' object",
    ),
    (
        "call without name",
        with_call(function={"name": None}),
        "messages[1].tool_calls[0].function.name",
        MISSING,
        "copy the name",
    ),
    (
        "arguments an object",
        with_call(function={"arguments": {"path": "a.py"}}),
        "messages[1].tool_calls[0].function.arguments",
        TYPE,
        "send the JSON text",
    ),
    (
        "tool message without an id",
        chat(ASKED, {"role": "tool", "content": "x"}),
        "messages[2].tool_call_id",
        MISSING,
        "the id of the tool call",
    ),
    (
        "tool message answering nothing",
        chat(ASKED, {"role": "tool", "tool_call_id": "call_9", "content": "x"}),
        "messages[2].tool_call_id",
        "unknown_tool_call_id",
        "'call_9', which answers no tool call of an earlier assistant message",
    ),
    (
        "tool message before its call",
        chat({"role": "tool", "tool_call_id": "call_1", "content": "x"}, ASKED),
        "messages[1].tool_call_id",
        "unknown_tool_call_id",
        "send the assistant message whose tool_calls hold that id first",
    ),
    ("tools an object", body(tools=READ), "tools", TYPE, "an array of tools"),
    ("tool a string", body(tools=["read_file"]), "tools[0]", TYPE, '{"type": "function"'),
    ("tool of another type", body(tools=[READ, {"type": "retrieval"}]), "tools[1].type", VALUE, ""),
    ("tool without function", body(tools=[{"type": "function"}]), "tools[0].function", MISSING, ""),
    ("tool without name", body(tools=[tool_fn()]), "tools[0].function.name", VALUE, "null"),
    (
        "name with space",
        body(tools=[tool_fn(name="read file")]),
        "tools[0].function.name",
        VALUE,
        "1 to 64",
    ),
    ("name too long", body(tools=[tool_fn(name="a" * 65)]), "tools[0].function.name", VALUE, ""),
    ("name then newline", body(tools=[tool_fn(name="ab\n")]), "tools[0].function.name", VALUE, ""),
    (
        "description a number",
        body(tools=[tool_fn(name="a", description=1)]),
        "tools[0].function.description",
        TYPE,
        "",
    ),
    (
        "parameters a string schema",
        body(tools=[READ, tool_fn(name="b", parameters={"type": "string"})]),
        "tools[1].function.parameters",
        VALUE,
        'an object with no "type": "object"; describe the arguments as a JSON schema',
    ),
    (
        "parameters a list",
        body(tools=[READ, tool_fn(name="b", parameters=[])]),
        "tools[1].function.parameters",
        VALUE,
        "an array",
    ),
    (
        "tool names twice",
        body(tools=[READ, WRITE, READ]),
        "tools[2].function.name",
        "duplicate_tool_name",
        "'read_file' in 'tools[2].function.name': tools[0] has it too",
    ),
    (
        "tool_choice sometimes",
        body(tools=[READ], tool_choice="sometimes"),
        "tool_choice",
        VALUE,
        "",
    ),
    ("tool_choice a list", body(tools=[READ], tool_choice=[]), "tool_choice", VALUE, "[]"),
    (
        "tool_choice names another tool",
        body(tools=[READ], tool_choice={"type": "function", "function": {"name": "write_file"}}),
        "tool_choice.function.name",
        VALUE,
        "'write_file', not one of the tools ('read_file')",
    ),
    (
        "tool_choice names a tool, no tools",
        body(tool_choice={"type": "function", "function": {"name": "read_file"}}),
        "tool_choice.function.name",
        VALUE,
        "the request has no tools",
    ),
    ("required, no tools", body(tool_choice="required"), "tool_choice", VALUE, "needs tools"),
    (
        "tool_choice allowed_tools",
        body(tools=[READ], tool_choice={"type": "allowed_tools"}),
        "tool_choice.type",
        VALUE,
        "'allowed_tools'",
    ),
    (
        "tool_choice without function",
        body(tools=[READ], tool_choice={"type": "function"}),
        "tool_choice.function",
        MISSING,
        "",
    ),
    (
        "tool_choice name a number",
        body(tools=[READ], tool_choice={"type": "function", "function": {"name": 1}}),
        "tool_choice.function.name",
        TYPE,
        "",
    ),
    ("max_tokens 0", body(max_tokens=0), "max_tokens", VALUE, "a positive integer"),
    ("max_tokens text", body(max_tokens="100"), "max_tokens", VALUE, "'100'"),
    ("max_tokens true", body(max_tokens=True), "max_tokens", VALUE, "true"),
    (
        "max_completion_tokens 1.5",
        body(max_completion_tokens=1.5),
        "max_completion_tokens",
        VALUE,
        "",
    ),
    (
        "token limits disagree",
        body(max_tokens=100, max_completion_tokens=200),
        "max_completion_tokens",
        VALUE,
        "max_tokens (100) and max_completion_tokens (200) disagree",
    ),
    ("stream yes", body(stream="yes"), "stream", TYPE, "a boolean (true or false)"),
    (
        "stream_options, no stream",
        body(stream_options={"include_usage": True}),
        "stream_options",
        VALUE,
        "needs 'stream': true",
    ),
    (
        "stream_options, stream false",
        body(stream=False, stream_options={}),
        "stream_options",
        VALUE,
        "",
    ),
    ("stream_options a list", body(stream=True, stream_options=[]), "stream_options", TYPE, ""),
    (
        "include_usage yes",
        body(stream=True, stream_options={"include_usage": "yes"}),
        "stream_options.include_usage",
        TYPE,
        "a boolean",
    ),
    ("tool_execution server", body(tool_execution="server"), "tool_execution", VALUE, "'auto'"),
    ("use_notebook_tools 1", body(use_notebook_tools=1), "use_notebook_tools", TYPE, ""),
    ("rounds 0", body(tool_execution="auto", max_tool_rounds=0), "max_tool_rounds", VALUE, ""),
    (
        "rounds 51",
        body(tool_execution="auto", max_tool_rounds=51),
        "max_tool_rounds",
        VALUE,
        "up to 50",
    ),
    ("rounds text", body(tool_execution="auto", max_tool_rounds="3"), "max_tool_rounds", VALUE, ""),
    (
        "rounds, client runs",
        body(max_tool_rounds=3),
        "max_tool_rounds",
        VALUE,
        "set tool_execution",
    ),
    ("n 2", body(n=2), "n", "unsupported_value", "the proxy returns one choice: send n=1"),
    ("n text", body(n="1"), "n", "unsupported_value", ""),
    ("n true", body(n=True), "n", "unsupported_value", ""),
]


def refusal(request: Any, **options: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        parse_chat_request(request, models=options.pop("models", None), **options)
    return caught.value


@pytest.mark.parametrize(
    ("request_body", "param", "code", "says"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_a_bad_request_is_refused_in_openai_shape(
    request_body: Any, param: str | None, code: str, says: str
) -> None:
    error = refusal(request_body)
    assert (error.status, error.type, error.param, error.code) == (
        400,
        "invalid_request_error",
        param,
        code,
    )
    assert says in error.message
    assert str(error) == error.message
    assert error.body() == {
        "error": {"message": error.message, "type": error.type, "param": param, "code": code}
    }


def test_an_unknown_model_lists_a_few_that_are_served() -> None:
    served = [f"model-{i}" for i in range(8)]
    error = refusal(body(model="gpt-5"), models=served)
    assert (error.status, error.param, error.code) == (400, "model", "model_not_found")
    assert error.message == (
        "The model 'gpt-5' is not served here; it serves 'model-0', 'model-1', 'model-2', "
        "'model-3', 'model-4' and 3 more (GET /v1/models)."
    )
    assert parse_chat_request(body(model="model-7"), models=served).model == "model-7"


def test_a_client_tool_may_not_take_a_kernel_tools_name() -> None:
    request = body(tools=[READ], use_notebook_tools=True)
    error = refusal(request, kernel_tools=["read_file", "run_cell"])
    assert (error.param, error.code) == ("tools[0].function.name", "duplicate_tool_name")
    assert "a kernel tool (use_notebook_tools) has it" in error.message
    # without use_notebook_tools the kernel's tools are not offered, so nothing clashes
    assert parse_chat_request(body(tools=[READ]), models=None, kernel_tools=["read_file"]).tools


def test_tool_choice_may_name_a_kernel_tool_when_they_are_offered() -> None:
    named = {"type": "function", "function": {"name": "run_cell"}}
    request = body(use_notebook_tools=True, tool_choice=named)
    assert parse_chat_request(request, models=None, kernel_tools=["run_cell"]).tool_choice == (
        "run_cell"
    )
    assert parse_chat_request(request, models=None).tool_choice == "run_cell"  # not known: sent
    error = refusal(request, kernel_tools=["read_file"])
    assert error.param == "tool_choice.function.name"
    required = body(use_notebook_tools=True, tool_choice="required")
    assert parse_chat_request(required, models=None).tool_choice == "required"


def test_a_conversation_becomes_our_messages() -> None:
    request = parse_chat_request(
        body(
            messages=[
                {"role": "developer", "content": "Be brief."},
                {"role": "system", "content": [{"type": "text", "text": "Use tools."}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Read "},
                        {"type": "text", "text": "a.py"},
                    ],
                    "name": "ann",
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        CALL,
                        {
                            **CALL,
                            "id": "call_2",
                            "function": {"name": "write_file", "arguments": "not json"},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "call_2", "content": "refused"},
                {
                    "role": "tool",
                    "tool_call_id": "call_1",
                    "content": [{"type": "text", "text": "x = 1"}],
                },
                {"role": "assistant", "content": "a.py sets x."},
            ]
        ),
        models=["gpt-4o"],
    )
    assert request.messages == (
        SystemMessage(content="Be brief."),
        SystemMessage(content="Use tools."),
        UserMessage(content="Read a.py"),
        AssistantMessage(
            tool_calls=(
                ToolCall(
                    id="call_1",
                    name="read_file",
                    arguments={"path": "a.py"},
                    raw_arguments='{"path": "a.py"}',
                ),
                ToolCall(
                    id="call_2", name="write_file", arguments="not json", raw_arguments="not json"
                ),
            )
        ),
        ToolResult(tool_call_id="call_2", name="write_file", content="refused"),
        ToolResult(tool_call_id="call_1", name="read_file", content="x = 1"),
        AssistantMessage(text="a.py sets x."),
    )


def test_a_plain_request_takes_the_defaults() -> None:
    assert parse_chat_request(body(), models=None) == ChatRequest(
        model="gpt-4o", messages=(UserMessage(content="hi"),)
    )
    explicit_nulls = body(tools=None, stream=None, tool_choice=None)
    explicit_nulls.update(stream_options=None, n=None, max_tokens=None, temperature=None)
    assert parse_chat_request(explicit_nulls, models=None) == ChatRequest(
        model="gpt-4o", messages=(UserMessage(content="hi"),)
    )


def test_sampling_fields_pass_through_and_unknown_fields_are_ignored() -> None:
    request = parse_chat_request(
        body(
            temperature=0.2,
            top_p=0.9,
            stop=["\n\n"],
            seed=7,
            presence_penalty=0.1,
            frequency_penalty=0.3,
            user="ann",
            parallel_tool_calls=False,
            response_format={"type": "json_object"},
            max_completion_tokens=500,
            logit_bias={"50256": -100},
            metadata={"a": "b"},
            store=True,
            n=1,
        ),
        models=None,
    )
    assert request.options == {
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["\n\n"],
        "seed": 7,
        "presence_penalty": 0.1,
        "frequency_penalty": 0.3,
        "user": "ann",
        "parallel_tool_calls": False,
        "response_format": {"type": "json_object"},
        "max_tokens": 500,
    }
    same = body(max_tokens=64, max_completion_tokens=64)
    assert parse_chat_request(same, models=None).options == {"max_tokens": 64}


def test_tools_and_tool_choice_become_what_our_models_take() -> None:
    auto_tool = tool_fn(name="auto")
    request = parse_chat_request(
        body(
            tools=[READ, WRITE, auto_tool],
            tool_choice={"type": "function", "function": {"name": "read_file"}},
        ),
        models=None,
    )
    assert request.tools == (
        ToolSpec(
            name="read_file", description="Read a file.", parameters=READ["function"]["parameters"]
        ),
        ToolSpec(
            name="write_file", description="", parameters={"type": "object", "properties": {}}
        ),
        ToolSpec(name="auto", description="", parameters={"type": "object", "properties": {}}),
    )
    assert request.tool_choice == "read_file"
    for choice in ("none", "auto", "required"):
        assert (
            parse_chat_request(body(tools=[READ], tool_choice=choice), models=None).tool_choice
            == choice
        )
    named_auto = {"type": "function", "function": {"name": "auto"}}
    request = parse_chat_request(body(tools=[auto_tool], tool_choice=named_auto), models=None)
    assert request.tool_choice == named_auto  # the string "auto" would mean something else
    assert parse_chat_request(body(tool_choice="auto"), models=None).tool_choice == "auto"


def test_streaming_and_tool_execution_fields() -> None:
    request = parse_chat_request(
        body(
            stream=True,
            stream_options={"include_usage": True},
            tool_execution="auto",
            use_notebook_tools=True,
            max_tool_rounds=50,
        ),
        models=None,
    )
    assert (request.stream, request.include_usage) == (True, True)
    assert (request.tool_execution, request.use_notebook_tools, request.max_tool_rounds) == (
        "auto",
        True,
        50,
    )
    plain = parse_chat_request(body(stream=True, stream_options={}), models=None)
    assert (plain.stream, plain.include_usage, plain.tool_execution) == (True, False, "client")


def test_api_error_defaults_and_body() -> None:
    error = ApiError("The upstream failed.", status=502, type="upstream_error")
    assert error.body() == {
        "error": {
            "message": "The upstream failed.",
            "type": "upstream_error",
            "param": None,
            "code": None,
        }
    }
    assert (ApiError("x").status, ApiError("x").type) == (400, "invalid_request_error")


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


def test_every_refusal_case_has_a_unique_id() -> None:
    ids = [case[0] for case in REFUSED]
    assert len(ids) == len(set(ids))
