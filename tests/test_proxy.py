"""The proxy with real clients: the official `openai` SDK (sync, async, streaming, tool calls,
both modes), curl, and the MCP SDK's client at /mcp, over a scripted upstream on loopback."""

from __future__ import annotations

import json
import shutil
import subprocess

import openai
import pytest

from copilot_nb.testing import call, reply
from tests.helpers import wait_until
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["proxy_for"]

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_a_plain_answer_streamed_and_not(proxy_for):
    proxy = proxy_for([reply("Hello there."), reply("Again.")])
    client = proxy.openai()
    answer = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.choices[0].message.content == "Hello there."
    assert answer.choices[0].finish_reason == "stop"
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Again."
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


def test_tool_calls_come_back_to_the_client_and_its_results_go_up(proxy_for):
    proxy = proxy_for([reply("", call("get_weather", city="Oslo")), reply("Rainy in Oslo.")])
    client = proxy.openai()
    messages = [{"role": "user", "content": "weather in Oslo?"}]
    with client.chat.completions.stream(model=MODEL, messages=messages, tools=[TOOL]) as stream:
        final = stream.get_final_completion()
    (tool_call,) = final.choices[0].message.tool_calls
    assert tool_call.function.name == "get_weather"
    assert json.loads(tool_call.function.arguments) == {"city": "Oslo"}
    assert final.choices[0].finish_reason == "tool_calls"
    messages += [
        final.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": tool_call.id, "content": "rain, 8°C"},
    ]
    named = {"type": "function", "function": {"name": "get_weather"}}
    answer = client.chat.completions.create(
        model=MODEL, messages=messages, tools=[TOOL], tool_choice=named, max_completion_tokens=50
    )
    assert answer.choices[0].message.content == "Rainy in Oslo."
    sent = proxy.upstream.requests[1]
    assert sent.body["tool_choice"] == named and sent.body["max_tokens"] == 50
    assert list(sent.tool_results.values()) == ["rain, 8°C"]
    assert [t["function"]["name"] for t in sent.body["tools"]] == ["get_weather"]


async def test_the_async_client_and_the_models_and_tools_lists(proxy_for):
    proxy = proxy_for([reply("async hello")])
    client = proxy.async_openai()
    answer = await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.choices[0].message.content == "async hello"
    assert [m.id async for m in client.models.list()] == [MODEL]
    import httpx

    async with httpx.AsyncClient(headers={"authorization": f"Bearer {proxy.token}"}) as http:
        tools = (await http.get(f"{proxy.url}/v1/tools", params={"name": "read_*"})).json()
        edits = (await http.get(f"{proxy.url}/v1/tools", params={"tags": "edit"})).json()
    assert [t["function"]["name"] for t in tools["data"]] == ["read_file"]
    assert {t["function"]["name"] for t in edits["data"]} >= {"write_file", "edit_file"}
    assert all(t["tags"] == ["edit"] for t in edits["data"])


def test_auto_mode_runs_the_servers_tools_and_reports_each_call(proxy_for, root):
    (root / "notes.txt").write_text("the launch is on Tuesday\n")
    proxy = proxy_for(
        [reply("", call("read_file", path="notes.txt")), reply("On Tuesday.")],
        allow_execution=True,
    )
    stream = proxy.openai().chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "when is the launch?"}],
        stream=True,
        extra_body={"tool_execution": "auto", "use_notebook_tools": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reports = [
        c.model_extra["copilot_nb"]["tool"] for c in chunks if "copilot_nb" in (c.model_extra or {})
    ]
    assert text == "On Tuesday."
    assert [(r["name"], r["status"]) for r in reports] == [
        ("read_file", "started"),
        ("read_file", "ok"),
    ]
    assert "the launch is on Tuesday" in next(
        iter(proxy.upstream.requests[1].tool_results.values())
    )


def test_auto_mode_relays_only_the_usage_the_upstream_sent(proxy_for):
    """Our estimate of an upstream that sends no usage counts in the notebook, marked; it is
    never handed to a client as the provider's count."""
    proxy = proxy_for([reply("Hi."), reply("Hi again.")], allow_execution=True)
    ask = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    auto = {"tool_execution": "auto"}
    counted = proxy.openai().chat.completions.create(**ask, extra_body=auto)
    assert counted.usage is not None and counted.usage.prompt_tokens == 10
    proxy.upstream.sends_usage = False
    silent = proxy.openai().chat.completions.create(**ask, extra_body=auto)
    assert silent.usage is not None and silent.usage.total_tokens == 0


def test_auto_mode_is_refused_unless_the_server_allows_it(proxy_for):
    proxy = proxy_for([reply("never")])
    with pytest.raises(openai.PermissionDeniedError) as refused:
        proxy.openai().chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"tool_execution": "auto"},
        )
    assert refused.value.code == "tool_execution_disabled"


def test_an_edit_asked_for_in_auto_mode_is_denied_with_nobody_to_ask(proxy_for, root):
    proxy = proxy_for(
        [reply("", call("write_file", path="x.txt", content="x")), reply("I could not.")],
        allow_execution=True,
    )
    answer = proxy.openai().chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "write x"}],
        extra_body={"tool_execution": "auto", "use_notebook_tools": True},
    )
    assert answer.choices[0].message.content == "I could not."
    assert not (root / "x.txt").exists()
    assert "nobody can approve it" in next(iter(proxy.upstream.requests[1].tool_results.values()))


def test_a_request_without_the_token_is_refused(proxy_for):
    proxy = proxy_for([reply("never")])
    import openai as sdk

    client = sdk.OpenAI(base_url=f"{proxy.url}/v1", api_key="wrong")
    with pytest.raises(sdk.AuthenticationError):
        client.models.list()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_streams_the_answer(proxy_for):
    proxy = proxy_for([reply("from curl")])
    body = json.dumps(
        {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    )
    shown = subprocess.run(
        [
            "curl",
            "-sN",
            f"{proxy.url}/v1/chat/completions",
            "-H",
            f"Authorization: Bearer {proxy.token}",
            "-H",
            "Content-Type: application/json",
            "-d",
            body,
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    events = [line[6:] for line in shown.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    text = "".join(
        json.loads(e)["choices"][0]["delta"].get("content") or ""
        for e in events[:-1]
        if json.loads(e)["choices"]
    )
    assert text == "from curl"


async def test_the_mcp_endpoint_lists_and_runs_the_servers_tools(proxy_for, root):
    (root / "a.txt").write_text("alpha\n")
    proxy = proxy_for([], allow_execution=True)
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {proxy.token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{proxy.url}/mcp", http_client=http)) as client,
    ):
        names = [t.name for t in (await client.list_tools()).tools]
        read = await client.call_tool("read_file", {"path": "a.txt"})
        write = await client.call_tool("write_file", {"path": "b.txt", "content": "b"})
    assert "read_file" in names and "write_file" in names
    assert "alpha" in read.content[0].text and not read.is_error
    assert write.is_error and "nobody can approve it" in write.content[0].text
    assert not (root / "b.txt").exists()


def test_the_command_line_serves_a_workspace(serve, root, tmp_path):
    """`copilot-nb serve` outside Jupyter: the workspace's tools, the configured model."""
    import os
    import signal
    import sys

    upstream = serve([reply("from the command line")])
    env = {
        **os.environ,
        "COPILOT_NB_MODEL": MODEL,
        "OPENAI_BASE_URL": upstream.url,
        "OPENAI_API_KEY": "k",
        "COPILOT_NB_CONFIG_DIR": str(tmp_path / "config"),
    }
    command = [
        sys.executable,
        "-m",
        "copilot_nb.serve.cli",
        "serve",
        "--port",
        "0",
        "--workspace",
        str(root),
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    try:
        first, second = process.stdout.readline(), process.stdout.readline()
        url = first.split(" at ")[1].split()[0]
        token = second.split(": ")[1].strip()
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=token)
        answer = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}]
        )
        assert answer.choices[0].message.content == "from the command line"
        assert [m.id for m in client.models.list()] == [MODEL]
        with pytest.raises(openai.AuthenticationError) as refused:
            openai.OpenAI(base_url=f"{url}/v1", api_key="wrong").models.list()
        assert "copilot-nb serve prints it" in refused.value.message, "worded for a shell"
        assert "%copilot" not in refused.value.message
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(15) == 0


@pytest.mark.parametrize(
    ("status", "error"), [(429, openai.RateLimitError), (503, openai.InternalServerError)]
)
def test_an_upstream_refusal_keeps_its_status_and_retry_hint(proxy_for, status, error):
    from copilot_nb.testing import fail

    proxy = proxy_for([fail(status, "slow down", headers={"retry-after": "7"})] * 2)
    client = proxy.openai(max_retries=0)
    for stream in (False, True):
        with pytest.raises(error) as refused:
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=stream
            )
        assert refused.value.status_code == status
        assert refused.value.response.headers["retry-after"] == "7"
        assert "slow down" in refused.value.message


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        ({"messages": [{"role": "user", "content": "hi"}]}, "model", None),
        (
            {"model": "gpt-unknown", "messages": [{"role": "user", "content": "hi"}]},
            "model",
            "model_not_found",
        ),
        (
            {"model": MODEL, "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id",
            None,
        ),
        (
            {
                "model": MODEL,
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "nope", "content": "x"},
                ],
            },
            "messages[1].tool_call_id",
            "unknown_tool_call_id",
        ),
        (
            {
                "model": MODEL,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function": {"name": "bad name!"}}],
            },
            "tools[0].function.name",
            None,
        ),
    ],
)
def test_bad_requests_get_openais_error_shape(proxy_for, body, param, code):
    import httpx

    proxy = proxy_for([])
    answer = httpx.post(
        f"{proxy.url}/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {proxy.token}"},
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    if code:
        assert error["code"] == code
    assert proxy.upstream.requests == [], "nothing was sent upstream"


def test_a_client_that_goes_away_cancels_the_upstream_request(proxy_for):

    import httpx

    proxy = proxy_for([reply("x" * 400, chunk_size=1, delay=0.02)])  # 8 s if read to the end
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    headers = {"authorization": f"Bearer {proxy.token}"}
    with httpx.stream(
        "POST", f"{proxy.url}/v1/chat/completions", json=body, headers=headers
    ) as answer:
        lines = answer.iter_lines()
        assert next(line for line in lines if line.startswith("data: "))
    wait_until(lambda: proxy.upstream.hangups > 0, what="the upstream saw the proxy hang up")
    assert proxy.upstream.hangups == 1, "the proxy closed its upstream stream when the client left"


def test_a_client_that_goes_away_stops_a_server_side_run(proxy_for):
    import asyncio
    import threading
    import time

    import httpx

    from copilot_nb import tool
    from copilot_nb.tools import ToolSet

    cancelled = threading.Event()

    @tool
    async def long_step() -> str:
        """Take a long time."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    proxy = proxy_for(
        [reply("", call("long_step")), reply("never")],
        allow_execution=True,
        tools=ToolSet([long_step]),
    )
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "go"}],
        "stream": True,
        "tool_execution": "auto",
        "use_notebook_tools": True,
    }
    headers = {"authorization": f"Bearer {proxy.token}"}
    with httpx.stream(
        "POST", f"{proxy.url}/v1/chat/completions", json=body, headers=headers
    ) as answer:
        for line in answer.iter_lines():
            if '"status":"started"' in line:
                break
    assert cancelled.wait(5), "the tool run was cancelled when the client left"
    time.sleep(0.2)
    assert len(proxy.upstream.requests) == 1, "no further model round after the client left"
