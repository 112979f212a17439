"""The chat panel with a fake front end: prompts become turns, events become small batched ops."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from pathlib import Path
from typing import Any

import comm
import pytest

from copilot_nb import Agent, ApprovalPolicy
from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel.widget import STALE_PAGE, ChatPanel
from copilot_nb.jupyter.panel.wire import FROM_PAGE
from copilot_nb.testing import call, fail, reply
from tests.panel_front import Front, RecordingComm, comm_message


@pytest.fixture(autouse=True)
def recording_comms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm, "create_comm", RecordingComm)


@pytest.fixture
def open_panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A panel on a session of its own whose models are the server's, working in tmp_path."""
    monkeypatch.chdir(tmp_path)

    def make(server: Any, **options: Any) -> tuple[ChatPanel, Front, Agent]:
        session = CopilotSession(resolve=options.pop("resolve", lambda spec: server.model()))
        panel = ChatPanel(session, model="openai:scripted", **options)
        return panel, Front(panel), session.agent_for(session.model())

    return make


async def test_a_prompt_streams_the_answer_and_ends_the_turn(serve, open_panel):
    server = serve([reply("Hello **there**, " + "word " * 200, chunk_size=3)])
    panel, front, agent = open_panel(server)
    front.say(kind="prompt", text="  hi  ")
    assert panel.widget.busy
    await panel.wait()

    assert front.ops()[0] == {"op": "user", "text": "hi"}
    assert front.text() == "Hello **there**, " + "word " * 200
    assert front.ops()[-1] == {"op": "end", "status": "done"}
    assert not panel.widget.busy and not panel.busy
    assert panel.widget.tokens_in == 10 and panel.widget.tokens_out > 0
    assert [m.role for m in agent.messages] == ["system", "user", "assistant"]


async def test_text_goes_out_in_batches_never_one_message_per_delta(serve, open_panel):
    answer = "".join(f"{i:04d}" for i in range(500))
    server = serve([reply(answer, chunk_size=4, delay=0.002)])
    panel, front, _ = open_panel(server, interval=0.05)
    started = time.monotonic()
    front.say(kind="prompt", text="count")
    await panel.wait()
    elapsed = time.monotonic() - started

    assert front.text() == answer
    batches = [m["ops"] for m in front.custom() if m["kind"] == "ops"]
    assert len(batches) <= elapsed / 0.05 + 6, f"{len(batches)} batches in {elapsed:.2f}s"
    assert len(batches) < 500 / 4
    for batch in batches:  # consecutive deltas are joined: at most one text op per batch
        kinds = [op["op"] for op in batch]
        assert all(a != b for a, b in itertools.pairwise(kinds)), kinds


async def test_approve_button_lets_the_edit_run(serve, open_panel, tmp_path):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    edit = call("edit_file", id="e1", path="hello.py", old_str="world", new_str="notebook")
    server = serve([reply("", edit), reply("Changed it.")])
    panel, front, _ = open_panel(server)
    front.say(kind="prompt", text="change the greeting")
    await front.until(lambda: "ask" in front.kinds())

    (tool,) = front.of("tool")
    assert tool == {
        "op": "tool",
        "id": "e1",
        "name": "edit_file",
        "target": "hello.py",
        "format": "diff",
        "preview": "-world\n+notebook",
    }
    assert (tmp_path / "hello.py").read_text() == 'print("hello, world")\n'
    front.say(kind="approve", id="e1")
    await panel.wait()

    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    ops = front.ops()
    assert {"op": "ask", "id": "e1", "category": "edit", "warning": ""} in ops
    assert {"op": "asked", "id": "e1", "approved": True} in ops
    (diff,) = front.of("diff")
    assert diff["path"] == "hello.py" and '+print("hello, notebook")' in diff["diff"]
    (done,) = front.of("done")
    assert (done["id"], done["ok"]) == ("e1", True)
    assert front.text() == "Changed it." and ops[-1] == {"op": "end", "status": "done"}


async def test_deny_button_refuses_the_edit(serve, open_panel, tmp_path):
    (tmp_path / "hello.py").write_text("x = 1\n")
    edit = call("write_file", id="w1", path="hello.py", content="x = 2\n")
    server = serve([reply("", edit), reply("Left it alone.")])
    panel, front, _ = open_panel(server)
    front.say(kind="prompt", text="rewrite it")
    await front.until(lambda: "ask" in front.kinds())
    front.say(kind="deny", id="w1")
    await panel.wait()

    assert (tmp_path / "hello.py").read_text() == "x = 1\n"
    (done,) = front.of("done")
    assert (done["id"], done["ok"], done["summary"]) == ("w1", False, "denied")
    assert "the user denied this call" in server.requests[1].messages[-1]["content"]


async def test_stop_cancels_at_once_and_the_next_prompt_works(serve, open_panel):
    talk = "talking " * 2000  # 32 s at the server's pace
    server = serve([reply(talk, chunk_size=5, delay=0.01), reply("Back again.")])
    panel, front, agent = open_panel(server)
    front.say(kind="prompt", text="talk for a long time")
    await front.until(lambda: len(front.text()) > 20)
    front.say(kind="stop")
    await panel.wait()

    assert len(front.text()) < len(talk) / 4, "the text stopped growing at Stop"
    assert front.ops()[-1] == {"op": "end", "status": "stopped"} and not panel.widget.busy
    assert agent.messages[-1].text.endswith("[interrupted]")
    front.say(kind="prompt", text="are you there?")
    await panel.wait()
    assert front.text().endswith("Back again.")
    assert [m["role"] for m in server.requests[1].messages][-2:] == ["assistant", "user"]


async def test_stop_while_an_approval_waits_leaves_a_valid_conversation(serve, open_panel):
    server = serve([reply("", call("write_file", id="w1", path="a.txt", content="a")), reply("ok")])
    panel, front, agent = open_panel(server)
    front.say(kind="prompt", text="write a.txt")
    await front.until(lambda: "ask" in front.kinds())
    front.say(kind="stop")
    await panel.wait()

    assert front.ops()[-1] == {"op": "end", "status": "stopped"}
    assert agent.messages[-1].role == "tool" and agent.messages[-1].is_error
    front.say(kind="approve", id="w1")  # a late click on a stale button does nothing
    front.say(kind="prompt", text="again")
    await panel.wait()
    assert front.text() == "ok"


async def test_a_panel_turn_is_the_sessions_turn_with_the_panel_as_approver(
    serve, open_panel, tmp_path
):
    server = serve(
        [reply("", call("write_file", id="w1", path="a.txt", content="a\n")), reply("ok")]
    )
    panel, front, agent = open_panel(server, approvals=ApprovalPolicy().approve_changes())
    seen: list[tuple[str, dict[str, Any]]] = []
    turn = panel.session.turn

    def recording(prompt: str, **options: Any) -> Any:
        seen.append((prompt, options))
        return turn(prompt, **options)

    panel.session.turn = recording  # type: ignore[method-assign]
    panel.send("write a.txt")
    await panel.wait()

    ((prompt, options),) = seen
    assert prompt == "write a.txt" and options["approver"] is panel
    assert options["model"] == "openai:scripted" and options["approvals"].edit == "allow"
    assert "ask" not in front.kinds() and (tmp_path / "a.txt").read_text() == "a\n"
    assert panel.session.approvals == ApprovalPolicy(), "the panel's policy held for its turn"
    assert agent.approvals == ApprovalPolicy()


async def test_a_prompt_while_busy_is_refused_with_a_note(serve, open_panel):
    server = serve([reply("slow " * 200, chunk_size=5, delay=0.005)])
    panel, front, _ = open_panel(server)
    first = panel.send("one")
    assert panel.send("two") is None
    await panel.wait()
    assert first is not None and first.done()
    (note,) = front.of("note")
    assert "press Stop first" in note["text"]
    assert [op["text"] for op in front.of("user")] == ["one"]


async def test_model_errors_show_in_the_panel_not_as_tracebacks(serve, open_panel):
    server = serve([fail(400, "This model does not exist")])
    panel, front, _ = open_panel(server)
    front.say(kind="prompt", text="hi")
    await panel.wait()
    (err,) = front.of("error")
    assert "This model does not exist" in err["message"]
    assert front.ops()[-1] == {"op": "end", "status": "failed"}


async def test_our_own_bugs_show_in_the_panel_with_details(serve, tmp_path, monkeypatch):
    def broken(workspace: Any) -> list[Any]:
        raise RuntimeError("agent exploded")

    monkeypatch.chdir(tmp_path)
    session = CopilotSession(resolve=lambda spec: serve([]).model())
    session.toolset_factories.append(broken)
    panel = ChatPanel(session, model="openai:x")
    front = Front(panel)
    front.say(kind="prompt", text="hi")
    await panel.wait()
    (err,) = front.of("error")
    assert err["message"] == "RuntimeError: agent exploded" and "Traceback" in err["detail"]
    assert front.ops()[-1] == {"op": "end", "status": "failed"} and not panel.widget.busy


async def test_a_bad_model_name_is_a_plain_error(tmp_path):
    panel = ChatPanel(CopilotSession(), model="nosuch:model")
    front = Front(panel)
    front.say(kind="prompt", text="hi")
    await panel.wait()
    (err,) = front.of("error")
    assert "unknown provider 'nosuch'" in err["message"] and err["detail"] == ""


async def test_the_model_picker_chooses_the_model_of_the_next_turn(serve, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = serve([reply("one"), reply("two")])
    asked: list[str] = []

    def model_for(spec: str) -> Any:
        asked.append(spec)
        return server.model()

    panel = ChatPanel(CopilotSession(resolve=model_for), model="openai:a", models=["openai:b"])
    front = Front(panel)
    assert panel.widget.models == ["openai:a", "openai:b", "offline"]
    panel.send("first")
    await panel.wait()
    front.set(model="openai:b")
    panel.send("second")
    await panel.wait()
    assert asked == ["openai:a", "openai:b"]


async def test_a_view_that_opens_later_gets_the_whole_transcript_once(serve, open_panel):
    server = serve([reply("", call("list_directory", id="l1", path=".")), reply("All done.")])
    panel, front, _ = open_panel(server)
    front.say(kind="ready", view="first")
    front.say(kind="prompt", text="look around")
    await panel.wait()
    live = front.ops()
    front.say(kind="ready", view="second")

    replay = front.custom()[-1]
    assert replay["kind"] == "replay" and replay["view"] == "second"
    assert replay["ops"] == _joined(live)
    assert front.custom()[0] == {"kind": "replay", "view": "first", "ops": []}


async def test_new_chat_forgets_the_conversation_and_clears_the_views(serve, open_panel):
    server = serve([reply("one"), reply("two")])
    panel, front, _ = open_panel(server)
    panel.send("first")
    await panel.wait()
    front.say(kind="new")
    assert front.ops()[-1] == {"op": "clear"}
    assert panel.session.agent is None, "the session (shared with the cells) forgot it"
    assert panel.widget.tokens_in == 0 and panel.outbox.history == []
    panel.send("second")
    await panel.wait()
    assert [m["role"] for m in server.requests[1].messages] == ["system", "user"]


async def test_the_meter_counts_every_requests_whole_prompt_as_a_bill_does(serve, open_panel):
    """Anthropic counts its cache reads and writes beside `input_tokens`: the meter adds them
    back, as `%copilot usage` does, and the window's fill is the last request's whole prompt."""
    from copilot_nb.messages import Usage
    from copilot_nb.models.anthropic.chat import AnthropicChat

    cache = {"cache_read_input_tokens": 4000, "cache_creation_input_tokens": 96}
    server = serve(
        [
            reply("", call("list_directory", path="."), usage=Usage(input_tokens=104, raw=cache)),
            reply("Done.", usage=Usage(input_tokens=150, output_tokens=5, raw=cache)),
        ]
    )
    claude = AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=server.base_url)
    panel, _, _ = open_panel(server, resolve=lambda spec: claude)
    panel.send("look around")
    await panel.wait()
    assert panel.widget.tokens_in == 4200 + 4246, "every request's prompt, cache included"
    assert panel.widget.context == 4246, "the window's fill: the last request's whole prompt"
    assert not panel.widget.estimated
    assert panel.session.saved.usage.total.input == panel.widget.tokens_in


async def test_a_server_that_sends_no_usage_puts_a_marked_estimate_on_the_meter(serve, open_panel):
    server = serve([reply("one " * 50), reply("two")], sends_usage=False)
    panel, front, _ = open_panel(server)
    panel.send("first")
    await panel.wait()
    assert panel.widget.tokens_in > 0 and panel.widget.tokens_out > 0, "not 0: unknown"
    assert panel.widget.estimated, "the meter says ~: our estimate, not the provider's count"
    front.say(kind="new")
    assert panel.widget.tokens_in == 0 and not panel.widget.estimated


async def test_new_chat_while_running_stops_first(serve, open_panel):
    server = serve([reply("talking " * 500, chunk_size=5, delay=0.01)])
    panel, front, agent = open_panel(server)
    panel.send("talk")
    await front.until(lambda: len(front.text()) > 10)
    front.say(kind="new")
    await panel.wait()
    await front.until(lambda: front.ops()[-1] == {"op": "clear"})  # once the stopped turn is done
    assert panel.session.agent is None
    assert [m.role for m in agent.messages][-2:] == ["user", "assistant"], "stopped, then forgot"


async def test_an_approval_from_a_subshell_thread_wakes_the_waiting_turn(
    serve, open_panel, tmp_path
):
    """JupyterLab 4.4+ sends comm messages to kernel subshells: another thread, another loop."""
    server = serve(
        [reply("", call("write_file", id="w1", path="a.txt", content="new\n")), reply("ok")]
    )
    panel, front, _ = open_panel(server)

    def from_subshell(**content: Any) -> threading.Thread:
        async def handle() -> None:
            await asyncio.sleep(0.2)  # arrives while this test's loop sleeps in select()
            front.say(**content)

        thread = threading.Thread(target=asyncio.run, args=(handle(),))
        thread.start()
        return thread

    from_subshell(kind="prompt", text="write a.txt")
    await front.until(lambda: "ask" in front.kinds())
    approver = from_subshell(kind="approve", id="w1")
    await asyncio.wait_for(panel.wait(), 3)
    approver.join()
    assert (tmp_path / "a.txt").read_text() == "new\n"
    assert front.ops()[-1] == {"op": "end", "status": "done"}
    assert panel.task is not None and panel.task.get_loop() is asyncio.get_running_loop()


def test_a_message_the_kernel_cannot_read_is_refused_in_the_transcript(serve, open_panel):
    """A page of another version: the transcript says what came and what to do, and nothing
    of what it carried (a form's key) is repeated."""
    _, front, _ = open_panel(serve([]))
    front.say(kind="nonsense")
    front.comm.handle_msg(comm_message({"method": "custom", "content": ["not", "a", "dict"]}))
    front.say(kind="approve")
    front.say(kind="complete", query="x", seq="1", view="v")
    front.say(kind="form", do="steal", provider="openai", view="v", key="sk-not-for-anyone")
    front.say(kind="prompt", text="   ")  # a blank prompt is no turn, and no mistake

    said = [op["message"] for op in front.of("error")]
    reads = "this kernel reads " + ", ".join(FROM_PAGE)
    assert [line.removeprefix("The panel's page sent ").split(". ")[0] for line in said] == [
        f"a message of kind 'nonsense'; {reads}",
        f"a message without a kind; {reads}",
        "a 'approve' message without its field 'id'",
        "a 'complete' message whose 'seq' is not a whole number",
        "a 'form' message whose 'do' is not one of state, models, save, forget",
    ]
    assert all(line.endswith(STALE_PAGE) for line in said)
    assert "sk-not-for-anyone" not in json.dumps(front.custom())
    assert front.kinds() == ["error"] * 5


def _joined(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    joined: list[dict[str, Any]] = []
    for op in ops:
        if joined and op["op"] in ("text", "reasoning") and joined[-1]["op"] == op["op"]:
            joined[-1] = {**op, "text": joined[-1]["text"] + op["text"]}
        else:
            joined.append(dict(op))
    return joined


def test_message_sizes_are_small(serve, open_panel):
    """A batch is its ops by name, no more; the comm envelope is ipywidgets' own."""
    panel, front, _ = open_panel(serve([]))
    panel.outbox.put({"op": "text", "text": "abc"})
    (message,) = front.custom()
    wire = json.dumps(message, separators=(",", ":"))
    assert wire == '{"kind":"ops","ops":[{"op":"text","text":"abc"}]}'


async def test_the_model_picker_is_filled_from_the_providers_model_list(serve, open_panel):
    server = serve([], model_name="llama3.1:8b")
    panel, _, _ = open_panel(server)
    assert panel.widget.models == ["openai:scripted", "offline"]
    task = panel.discover_models()
    assert task is not None
    await task
    assert panel.widget.models == ["openai:scripted", "offline", "openai:llama3.1:8b"]


async def test_a_provider_without_a_model_list_leaves_the_picker_as_it_was(open_panel, serve):
    from copilot_nb.models.openai.chat import OpenAIChat

    server = serve([])
    panel, _, _ = open_panel(
        server, resolve=lambda spec: OpenAIChat("x", base_url="http://127.0.0.1:9/v1")
    )
    await panel.discover_models()
    assert panel.widget.models == ["openai:scripted", "offline"]
