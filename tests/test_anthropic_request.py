"""The Messages API request body: pure, pinned by a snapshot, and checked against the SDK's types."""

from __future__ import annotations

from typing import Any, get_origin

import pytest
import typing_extensions as te
from anthropic.types import (
    AssistantMessageParam,
    TextBlockParam,
    ThinkingBlockParam,
    ToolChoiceToolParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    UserMessageParam,
)
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from pydantic import TypeAdapter

from copilot_nb.messages import (
    ToolSpec,
    UserMessage,
)
from copilot_nb.models.anthropic.chat import messages_request
from tests.wire_samples import TOOLS, conversation


def test_payload_details() -> None:
    body = messages_request("m", conversation(), tools=TOOLS)
    roles = [turn["role"] for turn in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert body["system"] == "You edit notebooks.\n\nBe brief."
    first_reply = body["messages"][1]["content"]
    assert first_reply[0] == {
        "type": "thinking",
        "thinking": "The user wants a fix.",
        "signature": "c2lnbmF0dXJl",
    }
    assert first_reply[3] == {"type": "tool_use", "id": "toolu_02", "name": "eval", "input": {}}
    results = body["messages"][2]["content"]
    assert [block["type"] for block in results] == ["tool_result", "tool_result", "text"]
    assert results[1]["is_error"] is True and "is_error" not in results[0]
    assert body["messages"][5]["content"] == "All green."  # unsigned reasoning is not sent back
    assert "tool_choice" not in body


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ("read_file", {"type": "tool", "name": "read_file"}),
        (
            {"type": "function", "function": {"name": "run_tests"}},
            {"type": "tool", "name": "run_tests"},
        ),
        (
            {"type": "any", "disable_parallel_tool_use": True},
            {"type": "any", "disable_parallel_tool_use": True},
        ),
    ],
)
def test_tool_choice_mapping(choice: Any, wire: dict[str, Any]) -> None:
    assert (
        messages_request("m", [UserMessage(content="hi")], tools=TOOLS, tool_choice=choice)[
            "tool_choice"
        ]
        == wire
    )


def _keys(typed_dict: Any) -> tuple[set[str], set[str]]:
    hints = te.get_type_hints(typed_dict, include_extras=True)
    return set(hints), {key for key, hint in hints.items() if get_origin(hint) is te.Required}


def _conforms(value: dict[str, Any], typed_dict: Any) -> None:
    """`value` has every required key of the SDK's TypedDict, no unknown key, and valid values."""
    known, required = _keys(typed_dict)
    assert required <= set(value) <= known, (typed_dict.__name__, set(value))
    TypeAdapter(typed_dict).validate_python(value)


BLOCK_TYPES = {
    "text": TextBlockParam,
    "thinking": ThinkingBlockParam,
    "tool_use": ToolUseBlockParam,
    "tool_result": ToolResultBlockParam,
}


def test_payload_matches_the_sdk_request_types() -> None:
    """Every part of the body is a shape the official SDK's request types describe."""
    body = messages_request(
        "claude-test",
        conversation(),
        tools=TOOLS,
        tool_choice="read_file",
        stop_sequences=["</answer>"],
    )
    known, required = _keys(MessageCreateParamsStreaming)
    assert required <= set(body) <= known
    for turn in body["messages"]:
        _conforms(turn, UserMessageParam if turn["role"] == "user" else AssistantMessageParam)
        for block in turn["content"] if isinstance(turn["content"], list) else ():
            _conforms(block, BLOCK_TYPES[block["type"]])
    for tool in body["tools"]:
        _conforms(tool, ToolParam)
    _conforms(body["tool_choice"], ToolChoiceToolParam)


def test_chat_completions_option_names_become_the_messages_apis():
    """What a proxy client sends in OpenAI's words reaches Anthropic in its own."""
    from copilot_nb.models.anthropic.chat import messages_request

    tool = ToolSpec(name="t", description="d", parameters={"type": "object", "properties": {}})
    body = messages_request(
        "claude",
        [{"role": "user", "content": "hi"}],
        tools=[tool],
        stop=["END"],
        user="u-1",
        parallel_tool_calls=False,
        temperature=0.2,
        top_k=5,
        seed=None,
    )
    assert body["stop_sequences"] == ["END"] and "stop" not in body
    assert body["metadata"] == {"user_id": "u-1"} and "user" not in body
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert (body["temperature"], body["top_k"]) == (0.2, 5) and "seed" not in body
    assert messages_request("claude", [{"role": "user", "content": "x"}], stop="STOP")[
        "stop_sequences"
    ] == ["STOP"]
