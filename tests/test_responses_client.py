"""OpenAIResponses talks to the loopback ScriptedServer speaking the Responses API's exact bytes."""

from __future__ import annotations

import json

import pytest

from copilot_nb.agent.model_strings import resolve_model
from copilot_nb.events import ModelResponse, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.messages import AssistantMessage, SystemMessage, ToolResult, UserMessage
from copilot_nb.models.base import ModelRequest
from copilot_nb.models.openai.responses import OpenAIResponses, reasons
from copilot_nb.models.openai.responses_request import responses_request
from copilot_nb.testing.script import ScriptedTurn, call, reply
from copilot_nb.testing.server import ScriptedServer

TOOL = {
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def test_the_request_body_is_pinned() -> None:
    """System prompt as instructions, stateless, flat function tools, calls and results as items,
    encrypted reasoning sent back before the turn's calls."""
    carried = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    answer = AssistantMessage(
        text="Reading it.",
        tool_calls=(call("read_file", id="call_1", path="a.py"),),
        reasoning_items=(carried,),
    )
    request = ModelRequest(
        messages=[
            SystemMessage(content="Be brief."),
            UserMessage(content="Open a.py"),
            answer,
            ToolResult(tool_call_id="call_1", name="read_file", content="print(1)"),
        ],
        tools=[TOOL],
        tool_choice="read_file",
        options={"max_tokens": 100, "temperature": None},
    )
    assert responses_request("gpt-4o", request) == {
        "model": "gpt-4o",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Open a.py"},
            carried,
            {"role": "assistant", "content": "Reading it."},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "read_file",
                "arguments": '{"path": "a.py"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "print(1)"},
        ],
        "stream": True,
        "store": False,
        "tools": [{"type": "function", **TOOL}],
        "tool_choice": {"type": "function", "name": "read_file"},
        "max_output_tokens": 100,
        "include": ["reasoning.encrypted_content"],
    }


def test_encrypted_reasoning_is_asked_for_from_reasoning_models_only() -> None:
    request = ModelRequest(messages=[UserMessage(content="hi")])
    assert "include" not in responses_request("gpt-4o", request)
    assert responses_request("gpt-5", request, reasoning=True)["include"] == [
        "reasoning.encrypted_content"
    ]
    assert [reasons(m) for m in ("gpt-5.3-codex", "o3-mini", "openai/gpt-oss-120b", "gpt-4o")] == [
        True,
        True,
        True,
        False,
    ]


def test_the_model_string_names_the_responses_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = resolve_model("openai-responses:gpt-5")
    assert isinstance(model, OpenAIResponses)
    assert (model.name, model.base_url, model.api_key) == (
        "gpt-5",
        "http://127.0.0.1:9/v1",
        "sk-test",
    )


async def test_a_reply_streams_as_events_over_loopback() -> None:
    turn = ScriptedTurn(
        text="Here it is.",
        reasoning="Look first.",
        tool_calls=(call("read_file", id="call_9", path="a.py"),),
        chunk_size=4,
    )
    with ScriptedServer([turn]) as server:
        model = OpenAIResponses("gpt-5", base_url=server.url, api_key="k")
        events = [e async for e in model.stream([UserMessage(content="hi")], tools=[TOOL])]
        await model.aclose()
    assert server.requests[0].path == "/v1/responses"
    assert server.requests[0].headers["Authorization"] == "Bearer k"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Here it is."
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Look first."
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert (deltas[0].id, deltas[0].name) == ("call_9", "read_file")
    assert "".join(d.arguments for d in deltas) == '{"path": "a.py"}'
    final = events[-1]
    assert isinstance(final, ModelResponse)
    message = final.message
    assert message.finish_reason == "tool_calls"
    assert message.tool_calls[0].arguments == {"path": "a.py"}
    assert [item["type"] for item in message.reasoning_items] == ["reasoning"]


async def test_an_agent_runs_a_tool_calling_turn_with_reasoning_carried_back(tmp_path) -> None:
    from copilot_nb import Agent
    from copilot_nb.events import Done

    (tmp_path / "a.py").write_text("print(1)\n")
    script = [
        reply("", call("read_file", path="a.py"), reasoning="Read it first."),
        reply("It prints 1."),
    ]
    with ScriptedServer(script) as server:
        model = OpenAIResponses("gpt-5", base_url=server.url, api_key="k")
        seen = [e async for e in Agent(model=model, workspace=tmp_path).run("What does a.py do?")]
        await model.aclose()
    assert isinstance(seen[-1], Done) and seen[-1].text == "It prints 1."
    second = server.requests[1].body
    kinds = [item.get("type", item.get("role")) for item in second["input"]]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"]
    assert second["input"][-1]["output"] and "print(1)" in json.dumps(second["input"][-1])
    assert second["store"] is False
    assert second["include"] == ["reasoning.encrypted_content"]
    server.assert_complete()


async def test_the_official_sdk_reads_the_scripted_wire_as_we_do() -> None:
    """`responses_wire` is what OpenAI sends: openai-python's `responses.stream()` accepts it
    over HTTP and builds the same reply."""
    import openai

    turn = ScriptedTurn(
        text="Naïve café ✓",
        reasoning="Plan: read.",
        tool_calls=(call("read_file", id="call_1", path="a.py"), call("ls", id="call_2")),
        chunk_size=3,
    )
    with ScriptedServer([turn, turn]) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.url, max_retries=0)
        async with client.responses.stream(
            model="gpt-5", input="hi", include=["reasoning.encrypted_content"]
        ) as stream:
            final = await stream.get_final_response()
        await client.close()
        model = OpenAIResponses("gpt-5", base_url=server.url, api_key="k")
        ours = await model.complete([UserMessage(content="hi")])
        await model.aclose()
    assert final.output_text == ours.text
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        (t.id, t.name, t.arguments) for t in ours.tool_calls
    ]
    reasoning = [item for item in final.output if item.type == "reasoning"]
    assert [part.text for item in reasoning for part in item.summary] == [ours.reasoning]
    assert [item.encrypted_content for item in reasoning] == [
        item["encrypted_content"] for item in ours.reasoning_items
    ]
    assert final.usage is not None and ours.usage is not None
    assert final.usage.to_dict() == dict(ours.usage.raw)


async def test_http_errors_and_broken_streams_go_through_the_shared_transport() -> None:
    from copilot_nb.errors import ModelConnectionError, ModelHTTPError
    from copilot_nb.testing.script import fail

    refused = 'model "gpt-4o" is not accessible via the /responses endpoint'
    script = [
        fail(400, refused),
        fail(503, "busy", headers={"retry-after-ms": "1"}),
        reply("Fine."),
        ScriptedTurn(text="x" * 200, chunk_size=10, break_after=5),
    ]
    with ScriptedServer(script) as server:
        model = OpenAIResponses("gpt-4o", base_url=server.url, api_key="k")
        with pytest.raises(ModelHTTPError, match="not accessible via the /responses") as caught:
            await model.complete([UserMessage(content="hi")])
        assert caught.value.status == 400
        assert (await model.complete([UserMessage(content="hi")])).text == "Fine."  # after a retry
        with pytest.raises(ModelConnectionError, match=r"broke off|ended before"):
            await model.complete([UserMessage(content="hi")])
        await model.aclose()
    server.assert_complete()
