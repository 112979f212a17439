"""`copilot-nb acp` end to end: the SDK's client side starts the agent as an editor does and
drives a session whose turns run in a real kernel against a loopback model."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from copilot_nb.testing import call, reply
from tests.acp_client import ASKS_IN_FORMS, Editor, agent_for
from tests.patience import patient

pytestmark = pytest.mark.kernel

acp = pytest.importorskip("acp")


_NOISY = "answer = 6 * 7\nprint(answer)\nimport os\nos.write(1, b'NOISE ON FD 1\\n')"
"""Code that prints (to the kernel's stream) and writes to file descriptor 1 itself, which the
kernel inherited from the agent: it must not reach the protocol's stdout."""


async def test_a_session_streams_text_asks_for_edits_and_runs_code_in_its_kernel(
    serve, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(
        [
            reply("Hello from the notebook agent."),
            reply("", call("write_file", id="w1", path="kept.txt", content="yes\n")),
            reply("Written."),
            reply("", call("write_file", id="w2", path="refused.txt", content="no\n")),
            reply("Not written."),
            reply("", call("run_code", id="r1", code=_NOISY)),
            reply("It printed 42."),
        ]
    )
    editor = Editor()
    async with agent_for(server, tmp_path, editor) as conn:
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.modes.current_mode_id == "agent"

        (tmp_path / "notes.md").write_text("the notes say 17\n")
        attached = acp.resource_link_block("notes.md", (tmp_path / "notes.md").as_uri())
        said = await conn.prompt(session_id=session.session_id, prompt=[_text("hi"), attached])
        assert said.stop_reason == "end_turn"
        assert "the notes say 17" in str(server.requests[0].messages[-1]["content"])
        assert editor.text() == "Hello from the notebook agent."
        assert said.usage.input_tokens > 0
        meter = editor.of("usage_update")[-1]  # the prompt's tokens against the window
        assert 0 < meter.used < meter.size

        editor.answers = ["allow_once"]
        await conn.prompt(session_id=session.session_id, prompt=[_text("write kept.txt")])
        assert (tmp_path / "kept.txt").read_text() == "yes\n"
        [asked] = editor.asked
        assert asked.kind == "edit"
        [started] = [u for u in editor.of("tool_call") if u.tool_call_id == "w1"]
        assert started.kind == "edit"
        diffs = [
            c
            for u in editor.of("tool_call_update")
            if u.tool_call_id == "w1"
            for c in (u.content or [])
            if c.type == "diff"
        ]
        assert diffs and diffs[0].new_text == "yes"
        assert diffs[0].path == str(tmp_path / "kept.txt")

        editor.answers = ["reject_once"]
        await conn.prompt(session_id=session.session_id, prompt=[_text("write refused.txt")])
        assert not (tmp_path / "refused.txt").exists()
        [finished] = [
            u for u in editor.of("tool_call_update") if u.tool_call_id == "w2" and u.status
        ]
        assert finished.status == "failed"

        editor.answers = ["allow_once"]
        await conn.prompt(session_id=session.session_id, prompt=[_text("compute")])
        [ran] = [u for u in editor.of("tool_call") if u.tool_call_id == "r1"]
        assert ran.kind == "execute"
        outputs = [u.raw_output for u in editor.of("tool_call_update") if u.tool_call_id == "r1"]
        assert any("42" in str(o) for o in outputs)
        assert editor.text().endswith("It printed 42.")
    assert "Error parsing JSON-RPC message" not in caplog.text  # stdout carried only ACP


async def test_cancel_stops_the_turn_within_a_second(serve, tmp_path: Path) -> None:
    slow = "word " * 400
    server = serve(
        [
            reply(slow, chunk_size=5, delay=0.05),
            reply("after the cancel"),
            reply("", call("write_file", id="w", path="half.txt", content="never\n")),
        ]
    )
    editor = Editor()
    async with agent_for(server, tmp_path, editor) as conn:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[_text("talk")])
        )
        while not editor.of("agent_message_chunk"):
            await asyncio.wait_for(editor.changed.wait(), patient(30))
            editor.changed.clear()
        began = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        ended = await asyncio.wait_for(turn, patient(10))
        took = time.monotonic() - began
        assert ended.stop_reason == "cancelled"
        assert took < patient(1.0), f"the turn took {took:.2f} s to stop"
        assert len(editor.text()) < len(slow)

        again = await conn.prompt(session_id=session.session_id, prompt=[_text("go on")])
        assert again.stop_reason == "end_turn"
        assert editor.text().endswith("after the cancel")

        editor.held = asyncio.Event()  # the permission dialog is open when the user cancels
        asking = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[_text("write half.txt")])
        )
        while not editor.asked:
            await asyncio.wait_for(editor.changed.wait(), patient(30))
            editor.changed.clear()
        await conn.cancel(session_id=session.session_id)
        editor.held.set()
        stopped = await asyncio.wait_for(asking, patient(10))
        assert stopped.stop_reason == "cancelled"
        assert not (tmp_path / "half.txt").exists()

        await conn.close_session(session_id=session.session_id)
        with pytest.raises(acp.RequestError):
            await conn.prompt(session_id=session.session_id, prompt=[_text("still there?")])


def _text(text: str):  # type: ignore[no-untyped-def]
    from acp import text_block

    return text_block(text)


async def test_sessions_are_listed_and_loaded_after_the_agent_restarts(
    serve, tmp_path: Path
) -> None:
    server = serve(
        [
            reply("", call("read_file", id="r", path="data.csv")),
            reply("It has two rows."),
            lambda request: reply(f"I saw {len(request.messages)} messages before this."),
        ]
    )
    (tmp_path / "data.csv").write_text("a\n1\n2\n")
    (tmp_path / "work.ipynb").write_text(_EMPTY_NOTEBOOK)
    meta = {"notebook": "work.ipynb"}
    async with agent_for(server, tmp_path, Editor()) as conn:
        await conn.initialize(protocol_version=1)
        first = await conn.new_session(cwd=str(tmp_path), mcp_servers=[], **meta)
        await conn.prompt(session_id=first.session_id, prompt=[_text("how many rows?")])
    assert (tmp_path / "work.copilot-chat.jsonl").exists()

    editor = Editor()
    async with agent_for(server, tmp_path, editor) as conn:
        init = await conn.initialize(protocol_version=1)
        assert init.agent_capabilities.load_session
        listed = await conn.list_sessions(cwd=str(tmp_path), **meta)
        assert [s.session_id for s in listed.sessions] == [first.session_id]
        assert listed.sessions[0].title == "how many rows?"

        await conn.load_session(
            cwd=str(tmp_path), session_id=first.session_id, mcp_servers=[], **meta
        )
        assert [u.content.text for u in editor.of("user_message_chunk")] == ["how many rows?"]
        assert editor.text() == "It has two rows."
        [read] = editor.of("tool_call")
        assert (read.tool_call_id, read.kind) == ("r", "read")

        await conn.prompt(session_id=first.session_id, prompt=[_text("and before?")])
        assert "I saw" in editor.text()
    said = server.requests[-1].messages
    assert any("two rows" in str(m.get("content")) for m in said)


_EMPTY_NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


async def test_plans_questions_cell_edits_and_the_model_are_the_editors_to_choose(
    serve, tmp_path: Path
) -> None:
    server = serve(
        [
            reply("1. load the data\n2. plot it"),
            reply("", call("ask_user", id="q", question="Which colour?", options=["red", "blue"])),
            lambda request: reply(f"You chose {request.tool_results['q']}."),
            reply("", call("list_cells", id="l")),
            reply("", call("edit_cell", id="e", cell_id="#1", old_str="1 + 1", new_str="2 + 2")),
            reply("Edited."),
            reply("From the other model."),
        ]
    )
    (tmp_path / "work.ipynb").write_text(_ONE_CELL_NOTEBOOK)
    editor = Editor()
    async with agent_for(server, tmp_path, editor, COPILOT_NB_ACP_LOG="INFO") as conn:
        await conn.initialize(protocol_version=1, client_capabilities=ASKS_IN_FORMS)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[], notebook="work.ipynb")
        sid = session.session_id
        [model] = session.config_options
        assert (model.id, model.current_value) == ("model", "openai:scripted")

        await conn.set_session_mode(session_id=sid, mode_id="plan")
        editor.answers = ["reject_once"]
        planned = await conn.prompt(session_id=sid, prompt=[_text("plot the data")])
        assert planned.stop_reason == "end_turn"
        [plan] = editor.of("plan")
        assert [e.content for e in plan.entries] == ["load the data", "plot it"]
        assert editor.asked[-1].kind == "switch_mode"

        await conn.set_session_mode(session_id=sid, mode_id="agent")
        editor.replies = ["blue"]
        await conn.prompt(session_id=sid, prompt=[_text("pick a colour")])
        [(question, _mode)] = editor.questions
        assert question == "Which colour?"
        assert editor.text().endswith("You chose The user answered: blue.")

        editor.answers = ["allow_always"]
        await conn.prompt(session_id=sid, prompt=[_text("make it 2 + 2")])
        assert "2 + 2" in (tmp_path / "work.ipynb").read_text()
        [edited] = [u for u in editor.of("tool_call") if u.tool_call_id == "e"]
        assert edited.kind == "edit"
        diffs = [
            c
            for u in editor.of("tool_call_update")
            if u.tool_call_id == "e"
            for c in (u.content or [])
            if c.type == "diff"
        ]
        assert diffs and "2 + 2" in diffs[0].new_text and "1 + 1" in (diffs[0].old_text or "")
        assert diffs[0].path == str(tmp_path / "work.ipynb")

        await conn.set_config_option(config_id="model", session_id=sid, value="openai:other")
        await conn.prompt(session_id=sid, prompt=[_text("who are you?")])
        assert server.requests[-1].body["model"] == "other"


_ONE_CELL_NOTEBOOK = (
    '{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": null,'
    ' "outputs": [], "source": "1 + 1"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
)


async def test_a_kernel_that_dies_mid_turn_ends_the_turn_saying_so(serve, tmp_path: Path) -> None:
    server = serve([reply("", call("run_code", id="x", code="import os\nos._exit(1)"))])
    editor = Editor()
    editor.answers = ["allow_once"]
    async with agent_for(server, tmp_path, editor) as conn:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        ended = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[_text("crash")]), patient(30)
        )
        assert ended.stop_reason == "end_turn"
        assert "kernel stopped" in editor.text()


async def test_a_session_attaches_to_a_running_kernel_and_works_on_its_variables(
    serve, kernel_for, tmp_path: Path
) -> None:
    server = serve(
        [
            reply("", call("run_code", id="r", code="total = sum(sales)\nprint(total)")),
            reply("The total is 60."),
        ]
    )
    kernel = kernel_for(server)
    assert kernel.execute("sales = [10, 20, 30]").status == "ok"
    editor = Editor()
    editor.answers = ["allow_once"]
    connection = kernel.manager.connection_file
    async with agent_for(server, tmp_path, editor) as conn:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(
            cwd=str(tmp_path), mcp_servers=[], connectionFile=connection
        )
        await conn.prompt(session_id=session.session_id, prompt=[_text("total sales?")])
        assert editor.text().endswith("The total is 60.")
    assert kernel.execute("print(total)").stdout.strip() == "60"  # the user's kernel lives on


async def test_always_allow_lasts_the_session_but_never_lifts_the_administrators_floor(
    serve, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"approval_floors": {"execute": "ask"}}')
    server = serve(
        [
            reply("", call("write_file", id="w1", path="a.txt", content="1\n")),
            reply("One."),
            reply("", call("write_file", id="w2", path="b.txt", content="2\n")),
            reply("Two."),
            reply("", call("run_code", id="r1", code="x = 1")),
            reply("Ran."),
            reply("", call("run_code", id="r2", code="x = 2")),
            reply("Ran again."),
        ]
    )
    editor = Editor()
    work = tmp_path / "work"
    work.mkdir()
    async with agent_for(server, work, editor, COPILOT_NB_POLICY=str(policy)) as conn:
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        editor.answers = ["allow_always"]
        await conn.prompt(session_id=sid, prompt=[_text("write a")])
        await conn.prompt(session_id=sid, prompt=[_text("write b")])
        assert [c.tool_call_id for c in editor.asked] == ["w1"]  # edits: asked once
        assert (work / "b.txt").read_text() == "2\n"

        editor.answers = ["allow_always", "allow_once"]
        await conn.prompt(session_id=sid, prompt=[_text("run")])
        await conn.prompt(session_id=sid, prompt=[_text("run again")])
        assert [c.tool_call_id for c in editor.asked] == ["w1", "r1", "r2"]  # the floor asks
