"""`POST /v1/responses` at the proxy (issue 35, case 7): the Responses API over the same backend
as Chat Completions, read by the official `openai` SDK, whose own types validate every body and
every streamed event, and by copilot_nb's own Responses client."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from copilot_nb.events import ModelResponse
from copilot_nb.messages import ToolSpec, Usage, UserMessage
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.testing import call, fail, reply
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["proxy_for"]

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": False,
}
WEATHER_SPEC = ToolSpec(
    name="get_weather", description="The weather in a city.", parameters=WEATHER["parameters"]
)
EVENT = TypeAdapter(ResponseStreamEvent)
OPEN_RESPONSES_REQUIRED = (
    "id",
    "object",
    "created_at",
    "completed_at",
    "status",
    "incomplete_details",
    "model",
    "previous_response_id",
    "instructions",
    "output",
    "error",
    "tools",
    "tool_choice",
    "truncation",
    "parallel_tool_calls",
    "text",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "temperature",
    "reasoning",
    "usage",
    "max_output_tokens",
    "max_tool_calls",
    "store",
    "background",
    "service_tier",
    "metadata",
    "safety_identifier",
    "prompt_cache_key",
)
"""The fields the Open Responses specification's `ResponseResource` requires (2026-04-24)."""


def raw_events(proxy: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The streamed events as sent, each checked against the SDK's event types, its `event:`
    line against its type and its sequence number against its place."""
    answer = httpx.post(
        f"{proxy.url}/v1/responses",
        json={**body, "stream": True},
        headers={"Authorization": f"Bearer {proxy.token}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = []
    for block in answer.text.strip().split("\n\n"):
        kind, data = block.split("\n")
        event = json.loads(data.removeprefix("data: "))
        assert kind == f"event: {event['type']}"
        assert event["sequence_number"] == len(events)
        EVENT.validate_python(event)
        events.append(event)
    return events


def without_ids(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Output items as sent, without their ids (new in each answer)."""
    return [{k: v for k, v in item.items() if k != "id"} for item in output]


def test_the_sdk_gets_a_response_with_its_instructions_sent_and_the_usage_counted(proxy_for):
    proxy = proxy_for([reply("Hello.", usage=Usage(input_tokens=21, output_tokens=4))])
    answer = httpx.post(
        f"{proxy.url}/v1/responses",
        json={"model": MODEL, "input": "hi", "instructions": "Be brief.", "max_output_tokens": 50},
        headers={"Authorization": f"Bearer {proxy.token}"},
    )
    assert answer.status_code == 200
    response = Response.model_validate(answer.json())
    assert response.status == "completed" and response.output_text == "Hello."
    assert response.instructions == "Be brief." and response.max_output_tokens == 50
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (21, 4)
    assert response.usage.total_tokens == 25
    sent = proxy.upstream.requests[0].body
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert sent["max_tokens"] == 50


def test_streamed_events_are_the_sdks_types_and_rebuild_the_same_reply(proxy_for):
    turn = reply("Rain, I think.", call("get_weather", city="Oslo"), reasoning="Check first.")
    proxy = proxy_for([turn, turn, turn])
    body = {"model": MODEL, "input": "Weather in Oslo?", "tools": [WEATHER]}
    events = raw_events(proxy, body)
    kinds = [event["type"] for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    added = [e["item"]["type"] for e in events if e["type"] == "response.output_item.added"]
    assert added == ["reasoning", "message", "function_call"]
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    arguments = [e for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert text == "Rain, I think."
    assert json.loads("".join(e["delta"] for e in arguments)) == {"city": "Oslo"}
    done = [e["output_index"] for e in events if e["type"] == "response.output_item.done"]
    assert done == [0, 1, 2], "each item closes once, in order"
    client = proxy.openai(max_retries=0)
    with client.responses.stream(model=MODEL, input="Weather in Oslo?", tools=[WEATHER]) as stream:
        for _ in stream:  # the SDK's accumulator checks every event against its state
            pass
        streamed = stream.get_final_response()
    whole = client.responses.create(model=MODEL, input="Weather in Oslo?", tools=[WEATHER])
    assert without_ids(events[-1]["response"]["output"]) == without_ids(whole.to_dict()["output"])
    assert streamed.output_text == whole.output_text == "Rain, I think."
    calls = [item for item in streamed.output if item.type == "function_call"]
    assert [(c.name, c.call_id, json.loads(c.arguments)) for c in calls] == [
        ("get_weather", turn.tool_calls[0].id, {"city": "Oslo"})
    ]


def test_every_response_carries_what_the_open_responses_spec_requires_as_asked(proxy_for):
    usage = Usage(
        input_tokens=21,
        output_tokens=9,
        raw={
            "prompt_tokens_details": {"cached_tokens": 16},
            "completion_tokens_details": {"reasoning_tokens": 5},
        },
    )
    turn = reply("Rain.", call("get_weather", city="Oslo"), usage=usage)
    proxy = proxy_for([turn, turn])
    bare_tool = {k: v for k, v in WEATHER.items() if k not in ("description", "strict")}
    answer_format = {
        "type": "json_schema",
        "name": "forecast",
        "schema": {"type": "object", "properties": {"sky": {"type": "string"}}},
        "strict": True,
    }
    body = {
        "model": MODEL,
        "input": "Weather in Oslo?",
        "tools": [bare_tool],
        "tool_choice": "required",
        "text": {"format": answer_format},
        "temperature": 0.2,
        "metadata": {"run": "7"},
        "prompt_cache_key": "notebook-1",
    }
    whole = httpx.post(
        f"{proxy.url}/v1/responses", json=body, headers={"Authorization": f"Bearer {proxy.token}"}
    ).json()
    events = raw_events(proxy, body)
    created, completed = events[0]["response"], events[-1]["response"]

    for response in (whole, created, completed):
        missing = [key for key in OPEN_RESPONSES_REQUIRED if key not in response]
        assert missing == []
        Response.model_validate(response, strict=True)
        assert response["tools"] == [{**bare_tool, "description": None, "strict": None}]
        assert response["tool_choice"] == "required" and response["parallel_tool_calls"] is True
        assert response["text"] == {"format": {**answer_format, "description": None}}
        assert (response["temperature"], response["top_p"]) == (0.2, 1.0), "as asked, else 1"
        assert (response["presence_penalty"], response["frequency_penalty"]) == (0.0, 0.0)
        assert (response["top_logprobs"], response["max_tool_calls"]) == (0, None)
        assert (response["service_tier"], response["background"]) == ("default", False)
        assert response["truncation"] == "disabled" and response["metadata"] == {"run": "7"}
        assert (response["prompt_cache_key"], response["safety_identifier"]) == (None, None), (
            "what the proxy does not forward, it did not use"
        )
    assert (created["status"], created["completed_at"], created["usage"]) == (
        "in_progress",
        None,
        None,
    )
    for response in (whole, completed):
        assert response["status"] == "completed" and response["incomplete_details"] is None
        assert isinstance(response["completed_at"], int)
        assert response["completed_at"] >= response["created_at"]
        assert response["usage"] == {
            "input_tokens": 21,
            "input_tokens_details": {"cached_tokens": 16, "cache_write_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 5},
            "total_tokens": 30,
        }


def test_function_call_outputs_reach_the_model_as_tool_results(proxy_for):
    proxy = proxy_for([reply("It rains in Oslo.")])
    client = proxy.openai(max_retries=0)
    answer = client.responses.create(
        model=MODEL,
        tools=[WEATHER],
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Oslo?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "function_call",
                "call_id": "call_7",
                "name": "get_weather",
                "arguments": '{"city": "Oslo"}',
            },
            {"type": "function_call_output", "call_id": "call_7", "output": "rain, 8°C"},
        ],
    )
    assert answer.output_text == "It rains in Oslo."
    sent = proxy.upstream.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "call_7"
    assert sent[2] == {"role": "tool", "tool_call_id": "call_7", "content": "rain, 8°C"}
    assert proxy.upstream.requests[0].body["tools"][0]["function"]["name"] == "get_weather"


def test_a_reply_cut_off_by_its_limit_is_incomplete(proxy_for):
    proxy = proxy_for([reply("Once upon a", finish_reason="length")] * 2)
    body = {"model": MODEL, "input": "A long story", "max_output_tokens": 3}
    last = raw_events(proxy, body)[-1]
    assert last["type"] == "response.incomplete"
    assert last["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert last["response"]["completed_at"] is None, "it did not complete"
    whole = proxy.openai(max_retries=0).responses.create(**body)
    assert whole.status == "incomplete" and whole.output_text == "Once upon a"


def test_an_upstream_refusal_keeps_its_status_and_a_broken_stream_fails_the_response(proxy_for):
    limited = fail(429, "Rate limit reached", headers={"retry-after": "2"})
    proxy = proxy_for([limited, reply("a" * 400, chunk_size=4, break_after=3)])
    client = proxy.openai(max_retries=0)
    with pytest.raises(openai.RateLimitError) as refused:
        client.responses.create(model=MODEL, input="hi")
    assert refused.value.response.headers["retry-after"] == "2"
    events = raw_events(proxy, {"model": MODEL, "input": "hi"})
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    failed = events[-1]["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "server_error"


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"previous_response_id": "resp_1"}, "previous_response_id"),
        ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0].type"),
        (
            {"input": [{"type": "function_call_output", "call_id": "c", "output": ""}]},
            "input[0].call_id",
        ),
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
        ({"tools": [{**WEATHER, "name": "bad name"}]}, "tools[0].name"),
        (
            {"tool_choice": {"type": "function", "name": "nope"}, "tools": [WEATHER]},
            "tool_choice.name",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
            "input[0].content[0].image_url",
        ),
    ],
)
def test_a_request_the_proxy_cannot_serve_is_refused_naming_the_field(proxy_for, change, param):
    client = proxy_for([]).openai(max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(**{"model": MODEL, "input": "hi", **change})
    assert refused.value.body["param"] == param


async def test_copilot_nbs_own_responses_client_reads_the_proxys_stream(proxy_for):
    turn = reply("Let me look.", call("get_weather", city="Bergen"), reasoning="Hm.")
    proxy = proxy_for([turn])
    model = OpenAIResponses(MODEL, base_url=f"{proxy.url}/v1", api_key=proxy.token, max_retries=0)
    events = [
        event
        async for event in model.stream([UserMessage(content="Weather?")], tools=[WEATHER_SPEC])
    ]
    final = events[-1]
    assert isinstance(final, ModelResponse)
    assert final.message.text == "Let me look." and final.message.reasoning == "Hm."
    assert [(c.name, c.arguments) for c in final.message.tool_calls] == [
        ("get_weather", {"city": "Bergen"})
    ]
