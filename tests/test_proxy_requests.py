"""What the proxy refuses of a client's request: each refusal in OpenAI's error shape (status,
type, param, code and a message that says what to do). What an accepted request becomes is in
test_proxy_request_messages.py."""

from __future__ import annotations

from typing import Any

import pytest

from copilot_nb.serve.openai.chat_request import ApiError, parse_chat_request
from tests.proxy_request_bodies import (
    ASKED,
    CALL,
    READ,
    WRITE,
    body,
    chat,
    tool_fn,
    user,
    with_call,
)

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
        "an image part without its URL",
        chat(user([{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {}}])),
        "messages[1].content[1].image_url.url",
        MISSING,
        "send the image as a data URL",
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


def test_every_refusal_case_has_a_unique_id() -> None:
    ids = [case[0] for case in REFUSED]
    assert len(ids) == len(set(ids))
