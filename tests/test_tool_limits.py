"""Every tool call is bounded: a slow tool is stopped, and arguments too deep or too big are refused.

A hijacked or broken model must not be able to hang a turn or crash it: each becomes an error
result the model reads, and the next round happens.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb import Agent, tool
from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.errors import ConfigError
from copilot_nb.events import ApprovalNeeded, Done, ToolFinished
from copilot_nb.messages import (
    MAX_ARGUMENT_CHARS,
    MAX_ARGUMENT_DEPTH,
    arguments_problem,
    parse_arguments,
)
from copilot_nb.testing import ScriptedModel, call, reply
from copilot_nb.tools import ToolSet
from copilot_nb.tools.kernel.tools import kernel_tools

DEEP = "[" * 200_000 + "]" * 200_000
DEEP_OBJECT = '{"path": ' + "[" * 200_000 + "]" * 200_000 + "}"
HUGE = json.dumps({"path": "x" * 2_000_000})
PIECE = 4096
"""The hostile arguments stream in pieces of 8 KiB: their size and depth are what is hostile, and
in the script's usual 16 characters HUGE alone was 125,000 events, 15 s to encode and decode."""

released = threading.Event()
"""Lets slow_sync and stubborn end before their `seconds`."""
completed: list[str] = []
"""The slow tools that ran to their end: a time limit that did not wait for one leaves it out."""
cancelled: list[str] = []
"""The slow tools that saw their cancellation."""


@tool
async def slow_async(seconds: float) -> str:
    """Wait, asynchronously.

    Args:
        seconds: how long.
    """
    try:
        await asyncio.sleep(seconds)  # the time that runs past the limit
    except asyncio.CancelledError:
        cancelled.append("slow_async")
        raise
    return "slept"


@tool
def slow_sync(seconds: float) -> str:
    """Wait in a worker thread until released (or `seconds` pass).

    Args:
        seconds: the longest wait.
    """
    released.wait(seconds)
    completed.append("slow_sync")
    return "slept"


@tool
async def stubborn(seconds: float) -> str:
    """Ignore cancellation and keep going, until released.

    Args:
        seconds: how long it insists at most.
    """
    end = time.monotonic() + seconds
    while time.monotonic() < end and not released.is_set():
        try:
            await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            continue
    completed.append("stubborn")
    return "done anyway"


@pytest.fixture
async def slow_tools() -> AsyncIterator[None]:
    """Fresh records for the slow tools; what still runs when the test ends is released (while
    the test's loop runs, so closing it does not wait for a worker thread)."""
    released.clear()
    completed.clear()
    cancelled.clear()
    yield
    released.set()


# --- parse_arguments and the registry, directly -----------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (DEEP, f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels"),
        (DEEP_OBJECT, f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels"),
        ("[" * 200_000, f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels"),
        (HUGE, "arguments are 2,000,012 characters, more than the 1,000,000 allowed"),
    ],
    ids=["deep-array", "deep-in-object", "unclosed", "2-MB"],
)
def test_arguments_too_deep_or_too_big_stay_text_with_a_reason(raw: str, problem: str) -> None:
    assert parse_arguments(raw) == raw, "refused text is kept as text, never parsed"
    reason = arguments_problem(raw)
    assert reason is not None and reason.startswith(problem)


def test_nesting_is_counted_outside_strings_only() -> None:
    brackets_in_a_string = json.dumps({"pattern": "[" * 5000 + "{" * 5000})
    assert parse_arguments(brackets_in_a_string) == {"pattern": "[" * 5000 + "{" * 5000}
    edge = '{"a": ' + "[" * (MAX_ARGUMENT_DEPTH - 1) + "]" * (MAX_ARGUMENT_DEPTH - 1) + "}"
    assert isinstance(parse_arguments(edge), dict), "64 levels are fine"
    assert arguments_problem("{" + edge[1:-1] + ', "b": [1]}') is None
    over = '{"a": ' + "[" * MAX_ARGUMENT_DEPTH + "]" * MAX_ARGUMENT_DEPTH + "}"
    assert parse_arguments(over) == over
    escaped_quote = '{"a": "\\"[[[[", "b": 1}'
    assert parse_arguments(escaped_quote) == {"a": '"[[[[', "b": 1}
    assert arguments_problem("x" * MAX_ARGUMENT_CHARS) is None


async def test_the_registry_explains_refused_arguments_by_tool_name(tmp_path: Path) -> None:
    tools = ToolSet([slow_async])
    out = await tools.call_tool("slow_async", DEEP)
    assert out.is_error
    assert out.content == (
        "slow_async: arguments nested deeper than 64 levels; send flat JSON arguments"
    )
    out = await tools.call_tool("slow_async", HUGE)
    assert out.content.startswith("slow_async: arguments are 2,000,012 characters")
    deep_dict: Any = 1
    for _ in range(100_000):
        deep_dict = {"seconds": deep_dict}
    out = await tools.call_tool("slow_async", deep_dict)
    assert out.is_error and "nested too deep" in out.content, "a deep dict from Python code too"


# --- time limits -------------------------------------------------------------------------------


async def test_an_async_tool_past_the_limit_is_stopped_with_a_result(slow_tools: None) -> None:
    tools = ToolSet([slow_async])
    out = await tools.call_tool("slow_async", {"seconds": 30}, timeout=0.2)
    assert cancelled == ["slow_async"]
    assert out.is_error and out.summary == "timed out after 0.2 s"
    assert out.content.startswith("slow_async did not finish within 0.2 s and was stopped; ")
    assert "CopilotMagics.tool_timeout" in out.content
    fast = await tools.call_tool("slow_async", {"seconds": 0.01}, timeout=5)
    assert fast.content == "slept"


async def test_a_sync_tool_past_the_limit_returns_at_once_and_says_it_may_still_run(
    slow_tools: None,
) -> None:
    tools = ToolSet([slow_sync])
    out = await tools.call_tool("slow_sync", {"seconds": 30}, timeout=0.2)
    assert completed == [], "the loop does not wait for the thread"
    assert out.is_error and out.summary == "timed out after 0.2 s"
    assert "worker thread, which cannot be stopped" in out.content


async def test_a_tool_that_ignores_cancellation_does_not_hold_the_loop(slow_tools: None) -> None:
    tools = ToolSet([stubborn])
    out = await tools.call_tool("stubborn", {"seconds": 30}, timeout=0.1)
    assert out.is_error and out.summary == "timed out after 0.1 s"
    assert completed == [], "the wait ends after a short grace, not with the tool"


async def test_run_code_keeps_its_own_longer_timeout() -> None:
    namespace: dict[str, Any] = {}
    tools = kernel_tools(lambda: namespace)
    (run_code,) = [t for t in tools if t.name == "run_code"]
    assert run_code.time_limit({"timeout": 600}, 120) == 610
    assert run_code.time_limit({"timeout": 5}, 120) == 120
    out = await tools.call_tool(
        "run_code",
        {"code": "import asyncio\nawait asyncio.sleep(0.4)\n'finished'", "timeout": 5},
        timeout=0.1,
    )
    assert out.content == "result:\n'finished'", "the general limit did not cut it short"


async def test_a_timed_out_tool_becomes_a_result_and_the_turn_goes_on(
    serve: Any, tmp_path: Path, slow_tools: None
) -> None:
    server = serve(
        [
            reply(
                "",
                call("slow_async", id="a", seconds=30),
                call("slow_sync", id="s", seconds=30),
            ),
            reply("Both were too slow."),
        ]
    )
    agent = Agent(
        model=server.model(),
        workspace=tmp_path,
        extra_tools=[slow_async, slow_sync],
        tool_timeout=0.2,
    )
    events = [e async for e in agent.run("wait")]
    assert cancelled == ["slow_async"] and completed == [], "neither was waited for"
    assert isinstance(events[-1], Done) and events[-1].text == "Both were too slow."
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.ok, e.summary) for e in finished] == [(False, "timed out after 0.2 s")] * 2
    results = server.requests[1].tool_results
    assert results["a"].startswith("slow_async did not finish within 0.2 s")
    assert results["s"].startswith("slow_sync did not finish within 0.2 s")
    server.assert_complete()


# --- nested and huge arguments over the wire ---------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            DEEP_OBJECT,
            "read_file: arguments nested deeper than 64 levels; send flat JSON arguments",
        ),
        (HUGE, "read_file: arguments are 2,000,012 characters, more than the 1,000,000 allowed"),
    ],
    ids=["200000-deep", "2-MB"],
)
async def test_hostile_arguments_become_an_error_result_and_the_turn_ends_done(
    serve: Any, tmp_path: Path, raw: str, expected: str
) -> None:
    server = serve(
        [
            reply("", call("read_file", id="bad", raw=raw), chunk_size=PIECE),
            reply("", call("read_file", id="good", path="notes.txt")),
            reply("Read it properly the second time."),
        ]
    )
    (tmp_path / "notes.txt").write_text("hello\n")
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=ApprovalPolicy())
    events = [e async for e in agent.run("read notes.txt")]

    assert not any(isinstance(e, ApprovalNeeded) for e in events), (
        "nothing to approve: it cannot run"
    )
    assert isinstance(events[-1], Done) and events[-1].text == "Read it properly the second time."
    assert server.requests[1].tool_results["bad"].startswith(expected)
    kept = next(m for m in server.requests[1].messages if m.get("tool_calls"))["tool_calls"][0]
    assert "refused_arguments" in kept["function"]["arguments"]
    assert len(json.dumps(server.requests[2].body)) < 50_000, "the history keeps a note, not them"
    assert "hello" in server.requests[2].tool_results["good"]
    server.assert_complete()


def test_a_bad_limit_or_limit_argument_fails_when_it_is_set(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="timeout_argument 'seconds' is not one of its arguments"):

        @tool(timeout_argument="seconds")
        async def wait(limit: float) -> str:
            """Wait.

            Args:
                limit: how long.
            """
            return ""

    with pytest.raises(ConfigError, match="tool_timeout must be more than 0 seconds"):
        Agent(model=ScriptedModel([]), workspace=tmp_path, tool_timeout=0)
    assert (
        Agent(model=ScriptedModel([]), workspace=tmp_path, tool_timeout=None).tool_timeout is None
    )


def test_the_magic_syncs_tool_timeout_to_the_session() -> None:
    from IPython.testing.globalipapp import get_ipython

    from copilot_nb.jupyter.magics import CopilotMagics

    magics = CopilotMagics(shell=get_ipython())
    assert magics.session.tool_timeout == 120
    magics.tool_timeout = 7.5
    assert magics.session.tool_timeout == 7.5
    magics.tool_timeout = 0
    assert magics.session.tool_timeout is None, "0 turns the limit off"


@pytest.fixture
def deep_stream_server() -> Any:
    """A loopback server whose one SSE event is JSON nested 200,000 deep (a broken provider)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = (
        "data: " + '{"choices": [{"index": 0, "delta": {"content": ' + DEEP + "}}]}\n\n"
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_a_reply_too_deep_to_decode_ends_the_run_with_failed(
    deep_stream_server: str, tmp_path: Path
) -> None:
    from copilot_nb import OpenAIChat
    from copilot_nb.events import Failed

    model = OpenAIChat("gpt-4o", base_url=deep_stream_server, api_key="k")
    events = [e async for e in Agent(model=model, workspace=tmp_path).run("hi")]
    assert isinstance(events[-1], Failed), events[-1]
    error = events[-1].error
    assert "the stream sent data that is JSON nested too deep to read" in error, error
    assert "expected a Chat Completions chunk" in error
