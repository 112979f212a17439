"""What an accepted request to the proxy becomes: our messages, tools, tool choice and options
(the refusals are in test_proxy_requests.py)."""

from __future__ import annotations

from copilot_nb.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from copilot_nb.serve.openai.chat_request import ChatRequest, parse_chat_request
from tests.proxy_request_bodies import CALL, READ, WRITE, body, tool_fn


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
