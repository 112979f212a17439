"""The agentic loop against a loopback scripted server: the user's story, round by round."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from copilot_nb import Agent, AgentError, ScriptError
from copilot_nb.events import Done, Failed, FileChanged, TextDelta, ToolFinished, ToolStarted
from copilot_nb.testing import ScriptedModel, call, reply


def tool_messages(request) -> list[dict]:
    return [m for m in request.messages if m["role"] == "tool"]


def assert_every_call_answered(messages: list[dict]) -> None:
    """What providers demand: each assistant tool call is followed by its tool result."""
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    for message in messages:
        for tool_call in message.get("tool_calls") or []:
            assert tool_call["id"] in answered, f"tool call {tool_call['id']} has no result"


async def test_read_edit_answer_over_three_rounds(serve, tmp_path: Path):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    server = serve(
        [
            reply("Reading it.", call("read_file", id="call_read", path="hello.py")),
            reply(
                "",
                call(
                    "edit_file",
                    id="call_edit",
                    path="hello.py",
                    old_str='"hello, world"',
                    new_str='"hello, notebook"',
                ),
            ),
            reply("Changed the greeting to **hello, notebook**."),
        ]
    )
    agent = Agent(model=server.model(), workspace=tmp_path)
    events = [e async for e in agent.run('Change the greeting in hello.py to "hello, notebook".')]

    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert isinstance(events[-1], Done)
    assert events[-1].text == "Changed the greeting to **hello, notebook**."
    started = [e for e in events if isinstance(e, ToolStarted)]
    assert [(e.name, e.summary) for e in started] == [
        ("read_file", "hello.py"),
        ("edit_file", "hello.py"),
    ]
    assert all(e.ok for e in events if isinstance(e, ToolFinished))
    (change,) = [e for e in events if isinstance(e, FileChanged)]
    assert '-print("hello, world")' in change.diff and '+print("hello, notebook")' in change.diff

    first, second, third = server.requests
    assert tool_messages(first) == []
    (read_result,) = tool_messages(second)
    assert read_result["tool_call_id"] == "call_read"
    assert 'print("hello, world")' in read_result["content"]
    assert [m["tool_call_id"] for m in tool_messages(third)] == ["call_read", "call_edit"]
    assert {t["function"]["name"] for t in first.body["tools"]} >= {
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
    }
    server.assert_complete()


async def test_next_run_continues_the_conversation(serve, tmp_path):
    server = serve([reply("First answer."), reply("Second answer.")])
    agent = Agent(model=server.model(), workspace=tmp_path)
    assert await agent.ask("one") == "First answer."
    assert await agent.ask("two") == "Second answer."
    roles = [m["role"] for m in server.requests[1].messages]
    assert roles == ["system", "user", "assistant", "user"]


async def test_bad_tool_calls_become_error_results_the_model_reads(serve, tmp_path):
    server = serve(
        [
            reply(
                "",
                call("no_such_tool", id="c1", path="x"),
                call("read_file", id="c2", raw='{"path": "hello.py"'),
                call("edit_file", id="c3", path="missing.py", old_str="a", new_str="b"),
                call("read_file", id="c4"),
            ),
            reply("I could not do it."),
        ]
    )
    agent = Agent(model=server.model(), workspace=tmp_path)
    events = [e async for e in agent.run("go")]
    finished = {e.call_id: e for e in events if isinstance(e, ToolFinished)}
    assert not any(e.ok for e in finished.values())
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(server.requests[1])}
    assert "no_such_tool" in results["c1"] and "read_file" in results["c1"]
    assert "JSON" in results["c2"]
    assert "missing.py" in results["c3"]
    assert "path" in results["c4"]
    assert isinstance(events[-1], Done)


async def test_paths_outside_the_workspace_are_refused_and_never_sent(serve, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("TOP-SECRET-VALUE\n")
    (root / "link").symlink_to(tmp_path / "secret.txt")
    escapes = ["../secret.txt", str(tmp_path / "secret.txt"), "link", "../project_evil/x"]
    server = serve(
        [
            reply("", *[call("read_file", id=f"r{i}", path=p) for i, p in enumerate(escapes)]),
            reply("", call("write_file", id="w", path="../escaped.txt", content="pwned")),
            reply("Refused, as expected."),
        ]
    )
    agent = Agent(model=server.model(), workspace=root)
    await agent.ask("read the secret")
    assert not (tmp_path / "escaped.txt").exists()
    for request in server.requests:
        assert "TOP-SECRET-VALUE" not in json.dumps(request.body)
    results = tool_messages(server.requests[1])
    assert all("outside the workspace" in m["content"] for m in results), results


async def test_max_rounds_ends_with_a_clear_error(serve, tmp_path):
    server = serve([reply("", call("list_directory", path=".")) for _ in range(3)])
    agent = Agent(model=server.model(), workspace=tmp_path, max_rounds=3)
    events = [e async for e in agent.run("loop forever")]
    assert isinstance(events[-1], Failed)
    assert "3 rounds" in events[-1].error
    with pytest.raises(AgentError):
        await Agent(
            model=serve([reply("", call("list_directory"))]).model(),
            workspace=tmp_path,
            max_rounds=1,
        ).ask("x")


async def test_model_errors_end_the_run_with_failed(serve, tmp_path):
    from copilot_nb.testing import fail

    server = serve([fail(400, "Invalid value for 'messages': the server could not process it.")])
    agent = Agent(model=server.model(), workspace=tmp_path)
    events = [e async for e in agent.run("hi")]
    assert isinstance(events[-1], Failed)
    assert "could not process it" in events[-1].error
    assert "HTTP 400" in events[-1].error


async def test_interrupt_during_a_tool_leaves_a_valid_conversation(serve, tmp_path):
    from copilot_nb import tool

    started = asyncio.Event()

    @tool
    async def slow_tool(seconds: float) -> str:
        """Wait a while.

        Args:
            seconds: how long.
        """
        started.set()
        await asyncio.sleep(seconds)
        return "finished"

    server = serve(
        [
            reply("", call("slow_tool", id="s1", seconds=30), call("list_directory", id="s2")),
            reply("Resumed fine."),
        ]
    )
    agent = Agent(model=server.model(), workspace=tmp_path, extra_tools=[slow_tool])

    async def consume() -> None:
        async for _ in agent.run("do slow work"):
            pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await agent.ask("try again") == "Resumed fine."
    messages = server.requests[1].messages
    assert_every_call_answered(messages)
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(server.requests[1])}
    assert results["s1"].startswith("cancelled") and results["s2"].startswith("cancelled")


async def test_interrupt_mid_stream_keeps_the_partial_text(serve, tmp_path):
    server = serve([reply("word " * 400, chunk_size=5, delay=0.01), reply("Next answer.")])
    agent = Agent(model=server.model(), workspace=tmp_path)
    seen = asyncio.Event()

    async def consume() -> None:
        async for event in agent.run("talk a lot"):
            if isinstance(event, TextDelta):
                seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await agent.ask("and now?") == "Next answer."
    roles = [m["role"] for m in server.requests[1].messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert server.requests[1].messages[2]["content"].endswith("[interrupted]")


async def test_in_process_scripted_model_fails_loudly_past_its_script(tmp_path):
    model = ScriptedModel([reply("only one")])
    agent = Agent(model=model, workspace=tmp_path)
    assert await agent.ask("1") == "only one"
    with pytest.raises(ScriptError, match="unscripted request #2"):
        await agent.ask("2")
    with pytest.raises(AssertionError, match="unscripted"):
        model.assert_complete()


async def test_one_turn_at_a_time_on_a_conversation(serve, tmp_path):
    server = serve([reply("slow " * 200, chunk_size=5, delay=0.005), reply("second")])
    agent = Agent(model=server.model(), workspace=tmp_path)
    first = agent.run("talk")
    assert isinstance(await first.__anext__(), TextDelta)
    overlapping = [e async for e in agent.run("me too")]
    assert isinstance(overlapping[-1], Failed) and "already working" in overlapping[-1].error
    rest = [e async for e in first]
    assert isinstance(rest[-1], Done)
    assert await agent.ask("now") == "second"
    assert len(server.requests) == 2


async def test_an_answer_from_another_thread_wakes_the_run(serve, tmp_path):
    """Widget messages may arrive on a kernel subshell: a thread with its own event loop."""
    import threading

    from copilot_nb.agent.approvals.policy import ApprovalPolicy
    from copilot_nb.events import ApprovalNeeded

    server = serve([reply("", call("write_file", path="a.txt", content="x")), reply("ok")])
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=ApprovalPolicy())

    errors: list[BaseException] = []

    def approve_elsewhere(event: ApprovalNeeded) -> None:
        async def click() -> None:  # a button handler on the subshell's own running loop
            try:
                event.approve()
            except BaseException as exc:
                errors.append(exc)

        asyncio.run(click())

    async def run() -> None:
        async for event in agent.run("write"):
            if isinstance(event, ApprovalNeeded):
                threading.Thread(target=approve_elsewhere, args=(event,)).start()

    asyncio.get_running_loop().set_debug(True)  # reports a future set from a foreign thread
    await asyncio.wait_for(run(), 10)
    assert errors == []
    assert (tmp_path / "a.txt").read_text() == "x"
