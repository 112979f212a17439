"""Claude through Copilot's Chat Completions marks its prompt cache where Anthropic's would be
marked (issue 39, case 3), with Copilot's own `copilot_cache_control`; nobody else is sent it.

Against the loopback fake of GitHub, with Claude served only through `/chat/completions` (as
Copilot lists it for older Claude models); each recorded body is checked against the `openai`
SDK's request types, the marker being the one field they do not name."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
import typing_extensions as te
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from pydantic import TypeAdapter

from copilot_nb import Agent, tool
from copilot_nb.agent.conversations.usage import tokens_of
from copilot_nb.messages import AssistantMessage, SystemMessage, ToolCall, ToolResult, Usage
from copilot_nb.messages import UserMessage as User
from copilot_nb.models.anthropic.cache import MAX_BREAKPOINTS
from copilot_nb.models.anthropic.chat import messages_request
from copilot_nb.models.copilot.catalog import CHAT
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.testing import call, reply
from copilot_nb.testing.github_fake import COPILOT_MODELS
from copilot_nb.tools import ToolSet

SYSTEM = "You are a notebook agent. " * 200
MARK = "copilot_cache_control"
SDK_MESSAGES = {
    "system": ChatCompletionSystemMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}


pytestmark = pytest.mark.usefixtures("copilot_home")


@tool
def row_count(table: str) -> int:
    """Count a table's rows.

    Args:
        table: its name.
    """
    return 1234


def claude_on_chat(model_id: str = "claude-sonnet-4", family: str = "claude-sonnet-4") -> list:
    """The fake's model list with a Claude model served only through Chat Completions."""
    models = json.loads(json.dumps(COPILOT_MODELS))
    (claude,) = [m for m in models if m["id"] == "claude-sonnet-4"]
    claude.update(id=model_id, supported_endpoints=[CHAT])
    claude["capabilities"]["family"] = family
    return models


def marks(value: Any, path: str = "", key: str = MARK) -> list[str]:
    """Where a body carries `key`, as paths (`.messages.3`)."""
    if isinstance(value, dict):
        here = [path] if key in value else []
        return here + [m for k, v in value.items() for m in marks(v, f"{path}.{k}", key)]
    if isinstance(value, list):
        return [m for i, v in enumerate(value) for m in marks(v, f"{path}.{i}", key)]
    return []


def conforms(body: Mapping[str, Any]) -> None:
    """The body is the SDK's streamed request; each message and tool, less the marker, has
    only keys its SDK type names; the marker is `{"type": "ephemeral"}` wherever it is."""
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
    parts = [(m, SDK_MESSAGES[m["role"]]) for m in body["messages"]]
    parts += [(t, ChatCompletionFunctionToolParam) for t in body.get("tools", [])]
    for part, typed_dict in parts:
        plain = {k: v for k, v in part.items() if k != MARK}
        assert set(plain) <= set(te.get_type_hints(typed_dict)), (typed_dict.__name__, plain)
        TypeAdapter(typed_dict).validate_python(plain)
        assert part.get(MARK, {"type": "ephemeral"}) == {"type": "ephemeral"}


# --- Claude on Copilot's Chat Completions ------------------------------------------------------


async def test_claude_marks_tools_system_and_the_last_two_requests_ends_over_two_turns(github):
    fake = github(
        [reply("", call("row_count", table="sales")), reply("1,234 rows."), reply("Still.")],
        models=claude_on_chat(),
    )
    model = fake.model("claude-sonnet-4")
    agent = Agent(model=model, tools=ToolSet([row_count]), system_prompt=SYSTEM)
    assert await agent.ask("how many rows?") == "1,234 rows."
    assert await agent.ask("and now?") == "Still."

    assert [r.path for r in fake.chat_requests] == ["/chat/completions"] * 3
    first, second, next_turn = (r.body for r in fake.chat_requests)
    for body in (first, second, next_turn):
        conforms(body)
        assert len(marks(body)) <= MAX_BREAKPOINTS
        assert marks(body, key="cache_control") == [], "Anthropic's own field is not Copilot's"
        assert "prompt_cache_key" not in body
    assert set(marks(first)) == {".tools.0", ".messages.0", ".messages.1"}
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert set(marks(second)) == {".tools.0", ".messages.0", ".messages.1", ".messages.3"}, (
        "the previous request's end (the question) and this one's (the tool result)"
    )
    assert next_turn["messages"][-1]["content"] == "and now?"
    assert set(marks(next_turn)) == {".tools.0", ".messages.0", ".messages.3", ".messages.5"}
    assert second["messages"][:2] == first["messages"], "the first request is the prefix"
    assert second["tools"] == first["tools"] == next_turn["tools"]
    fake.assert_complete()
    await model.aclose()


async def test_a_long_conversation_marks_what_anthropics_encoder_marks(github):
    """The same conversation on both wires: the same tool list, system prompt and messages are
    marked, at most four, so the two cannot drift apart."""
    history: list[Any] = [SystemMessage(content=SYSTEM)]
    for n in range(5):
        calls = tuple(
            ToolCall.from_raw(id=f"c{n}{k}", name="row_count", raw_arguments="{}") for k in "ab"
        )
        history += [User(content=f"question {n}"), AssistantMessage(tool_calls=calls)]
        history += [
            ToolResult(tool_call_id=c.id, name="row_count", content=f"rows {c.id}") for c in calls
        ]
    fake = github([reply("ok")], models=claude_on_chat())
    model = fake.model("claude-sonnet-4")
    await model.complete(history, tools=[row_count.spec])
    (request,) = fake.chat_requests
    conforms(request.body)
    chat = request.body
    anthropic = messages_request("claude-sonnet-4", history, tools=[row_count.spec], cache=True)

    def marked_text(body: Mapping[str, Any], paths: list[str]) -> set[str]:
        found = set()
        for path in paths:
            node: Any = body
            for step in path.strip(".").split("."):
                node = node[int(step)] if isinstance(node, list) else node[step]
            tool_name = node.get("name") or node.get("function", {}).get("name")
            found.add(str(node.get("text") or node.get("content") or tool_name))
        return found

    chat_marks, anthropic_marks = marks(chat), marks(anthropic, key="cache_control")
    assert len(chat_marks) == len(anthropic_marks) == MAX_BREAKPOINTS
    # the tool results and the next question are one request's end: one user turn on
    # Anthropic's wire, separate messages on this one
    expected = {"row_count", SYSTEM, "question 4", "rows c4b"}
    assert marked_text(chat, chat_marks) == marked_text(anthropic, anthropic_marks) == expected
    await model.aclose()


async def test_the_family_copilot_lists_decides_not_the_name(github):
    fake = github([reply("ok")], models=claude_on_chat("oswe-preview", family="claude-sonnet-4"))
    model = fake.model("oswe-preview")
    await model.complete([SystemMessage(content=SYSTEM), User(content="hi")])
    assert set(marks(fake.chat_requests[0].body)) == {".messages.0", ".messages.1"}
    await model.aclose()


async def test_cache_prompt_false_sends_no_marks(github):
    fake = github([reply("ok")], models=claude_on_chat())
    model = fake.model("claude-sonnet-4")
    model.cache_prompt = False
    await model.complete([SystemMessage(content=SYSTEM), User(content="hi")])
    assert marks(fake.chat_requests[0].body) == []
    await model.aclose()


# --- nobody else is sent the field -------------------------------------------------------------


async def test_gpt_on_copilot_caches_by_itself_and_gets_no_marks(github):
    fake = github([reply("", call("row_count", table="a")), reply("ok")])
    model = fake.model("gpt-4o")
    agent = Agent(model=model, tools=ToolSet([row_count]), system_prompt=SYSTEM)
    assert await agent.ask("how many?") == "ok"
    for request in fake.chat_requests:
        assert request.path == "/chat/completions"
        conforms(request.body)
        assert marks(request.body) == [] and "prompt_cache_key" not in request.body
    await model.aclose()


async def test_an_openai_compatible_server_serving_claude_gets_no_copilot_field(serve):
    """A router (LiteLLM, OpenRouter) may refuse a field it does not know."""
    server = serve([reply("", call("row_count", table="a")), reply("ok")])
    model = OpenAIChat("claude-sonnet-4", api_key="k", base_url=server.url)
    agent = Agent(model=model, tools=ToolSet([row_count]), system_prompt=SYSTEM)
    assert await agent.ask("how many?") == "ok"
    for request in server.requests:
        assert marks(request.body) == [] and marks(request.body, key="cache_control") == []


# --- cached tokens, read from Copilot's usage block --------------------------------------------


async def test_copilots_cached_tokens_are_read_from_its_usage_block(github):
    usage = Usage(
        input_tokens=5000, output_tokens=50, raw={"prompt_tokens_details": {"cached_tokens": 4096}}
    )
    fake = github([reply("ok", usage=usage)], models=claude_on_chat())
    model = fake.model("claude-sonnet-4")
    answer = await model.complete([User(content="q")])
    assert answer.usage is not None
    counted = tokens_of(answer.usage)
    assert (counted["input"], counted["cached"], counted["output"]) == (5000, 4096, 50)
    await model.aclose()
