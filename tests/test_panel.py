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
from comm.base_comm import BaseComm

from copilot_nb import Agent, ApprovalPolicy
from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel.feed import Outbox, arguments_preview, event_ops
from copilot_nb.jupyter.panel.widget import ChatPanel
from copilot_nb.testing import call, fail, reply


class RecordingComm(BaseComm):
    """Stands in for the kernel's comm: keeps every message the widget publishes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.published: list[tuple[str, Any]] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        self.published.append((msg_type, data))


class Front:
    """A fake browser view of one panel: reads what the kernel sent, sends what a user does."""

    def __init__(self, panel: ChatPanel) -> None:
        self.panel = panel
        self.comm: RecordingComm = panel.widget.comm

    def custom(self) -> list[dict[str, Any]]:
        return [
            data["content"]
            for kind, data in self.comm.published
            if kind == "comm_msg" and data.get("method") == "custom"
        ]

    def ops(self) -> list[list[Any]]:
        return [op for message in self.custom() if "ops" in message for op in message["ops"]]

    def kinds(self) -> list[str]:
        return [op[0] for op in self.ops()]

    def text(self) -> str:
        return "".join(op[1] for op in self.ops() if op[0] == "t")

    def say(self, **content: Any) -> None:
        self.comm.handle_msg(_message({"method": "custom", "content": content}))

    def set(self, **state: Any) -> None:
        self.comm.handle_msg(_message({"method": "update", "state": state}))

    async def until(self, predicate: Any, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"timed out; ops so far: {self.ops()[-5:]}"
            await asyncio.sleep(0.01)


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

    assert front.ops()[0] == ["u", "hi"]
    assert front.text() == "Hello **there**, " + "word " * 200
    assert front.ops()[-1] == ["end", "done"]
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
    batches = [m["ops"] for m in front.custom() if "ops" in m]
    assert len(batches) <= elapsed / 0.05 + 6, f"{len(batches)} batches in {elapsed:.2f}s"
    assert len(batches) < 500 / 4
    for batch in batches:  # consecutive deltas are joined: at most one text op per batch
        kinds = [op[0] for op in batch]
        assert all(a != b for a, b in itertools.pairwise(kinds)), kinds


async def test_approve_button_lets_the_edit_run(serve, open_panel, tmp_path):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    edit = call("edit_file", id="e1", path="hello.py", old_str="world", new_str="notebook")
    server = serve([reply("", edit), reply("Changed it.")])
    panel, front, _ = open_panel(server)
    front.say(kind="prompt", text="change the greeting")
    await front.until(lambda: "ask" in front.kinds())

    tool = next(op for op in front.ops() if op[0] == "tool")
    assert tool == ["tool", "e1", "edit_file", "hello.py", "diff", "-world\n+notebook"]
    assert (tmp_path / "hello.py").read_text() == 'print("hello, world")\n'
    front.say(kind="approve", id="e1")
    await panel.wait()

    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    ops = front.ops()
    assert ["ask", "e1", "edit"] in ops and ["asked", "e1", True] in ops
    (diff,) = [op for op in ops if op[0] == "diff"]
    assert diff[1] == "hello.py" and '+print("hello, notebook")' in diff[2]
    (done,) = [op for op in ops if op[0] == "done"]
    assert done[1:3] == ["e1", True]
    assert front.text() == "Changed it." and ops[-1] == ["end", "done"]


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
    (done,) = [op for op in front.ops() if op[0] == "done"]
    assert done[1:4] == ["w1", False, "denied"]
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
    assert front.ops()[-1] == ["end", "stopped"] and not panel.widget.busy
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

    assert front.ops()[-1] == ["end", "stopped"]
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
    (note,) = [op for op in front.ops() if op[0] == "note"]
    assert "press Stop first" in note[1]
    assert [op[1] for op in front.ops() if op[0] == "u"] == ["one"]


async def test_model_errors_show_in_the_panel_not_as_tracebacks(serve, open_panel):
    server = serve([fail(400, "This model does not exist")])
    panel, front, _ = open_panel(server)
    front.say(kind="prompt", text="hi")
    await panel.wait()
    (err,) = [op for op in front.ops() if op[0] == "err"]
    assert "This model does not exist" in err[1]
    assert front.ops()[-1] == ["end", "failed"]


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
    (err,) = [op for op in front.ops() if op[0] == "err"]
    assert err[1] == "RuntimeError: agent exploded" and "Traceback" in err[2]
    assert front.ops()[-1] == ["end", "failed"] and not panel.widget.busy


async def test_a_bad_model_name_is_a_plain_error(tmp_path):
    panel = ChatPanel(CopilotSession(), model="nosuch:model")
    front = Front(panel)
    front.say(kind="prompt", text="hi")
    await panel.wait()
    (err,) = [op for op in front.ops() if op[0] == "err"]
    assert "unknown provider 'nosuch'" in err[1] and err[2] == ""


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
    assert replay["replay"] == "second"
    assert replay["ops"] == _joined(live)
    assert front.custom()[0] == {"replay": "first", "ops": []}


async def test_new_chat_forgets_the_conversation_and_clears_the_views(serve, open_panel):
    server = serve([reply("one"), reply("two")])
    panel, front, _ = open_panel(server)
    panel.send("first")
    await panel.wait()
    front.say(kind="new")
    assert front.ops()[-1] == ["clear"]
    assert panel.session.agent is None, "the session (shared with the cells) forgot it"
    assert panel.widget.tokens_in == 0 and panel.outbox.history == []
    panel.send("second")
    await panel.wait()
    assert [m["role"] for m in server.requests[1].messages] == ["system", "user"]


async def test_new_chat_while_running_stops_first(serve, open_panel):
    server = serve([reply("talking " * 500, chunk_size=5, delay=0.01)])
    panel, front, agent = open_panel(server)
    panel.send("talk")
    await front.until(lambda: len(front.text()) > 10)
    front.say(kind="new")
    await panel.wait()
    await front.until(lambda: front.ops()[-1] == ["clear"])  # once the stopped turn is done
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
    assert front.ops()[-1] == ["end", "done"]
    assert panel.task is not None and panel.task.get_loop() is asyncio.get_running_loop()


def test_unknown_or_malformed_messages_are_ignored(serve, open_panel):
    _, front, _ = open_panel(serve([]))
    front.say(kind="nonsense")
    front.comm.handle_msg(_message({"method": "custom", "content": ["not", "a", "dict"]}))
    front.say(kind="prompt", text="   ")
    assert front.ops() == []


# --- the pure parts -----------------------------------------------------------------------


def test_outbox_joins_text_and_sends_a_batch_when_it_is_due():
    sent: list[dict[str, Any]] = []
    now = [0.0]
    timers: list[float] = []
    box = Outbox(
        sent.append, interval=0.1, max_wait=0.3, clock=lambda: now[0], call_later=_record(timers)
    )
    box.put(["t", "a"])  # the first op after a quiet spell goes at once
    now[0] = 0.01
    box.put(["t", "b"])
    box.put(["t", "c"])
    box.put(["r", "hm"])
    assert sent == [{"ops": [["t", "a"]]}]
    assert timers == [pytest.approx(0.29)], "a small batch is sent by a timer at the latest"
    now[0] = 0.2
    box.put(["t", "d"])  # the interval has passed, but a few characters wait for more
    assert len(sent) == 1
    now[0] = 0.31
    box.put(["t", "e"])  # ... up to max_wait
    assert sent[-1] == {"ops": [["t", "bc"], ["r", "hm"], ["t", "de"]]}
    now[0] = 0.35
    box.put(["t", "x" * 60])
    assert len(sent) == 2 and timers[-1] == pytest.approx(0.06)
    now[0] = 0.45
    box.put(["t", "y"])  # a full batch goes as soon as the interval has passed
    assert sent[-1] == {"ops": [["t", "x" * 60 + "y"]]}
    now[0] = 0.46
    box.put(["t", "z"])
    box.put(["end", "done"])  # urgent: goes at once, with what was pending
    assert sent[-1] == {"ops": [["t", "z"], ["end", "done"]]}
    assert box.history == [
        ["t", "abc"],
        ["r", "hm"],
        ["t", "de" + "x" * 60 + "yz"],
        ["end", "done"],
    ]


def test_outbox_replay_and_clear():
    sent: list[dict[str, Any]] = []
    box = Outbox(sent.append, interval=10, clock=lambda: 0.0)
    box.put(["u", "hi"])
    box.put(["t", "x"])
    box.replay("v")
    assert sent[-2:] == [{"ops": [["t", "x"]]}, {"replay": "v", "ops": [["u", "hi"], ["t", "x"]]}]
    box.clear()
    assert sent[-1] == {"ops": [["clear"]]} and box.history == []


def test_arguments_preview_shows_edits_as_diffs_and_everything_it_approves():
    assert arguments_preview({"path": "a", "old_str": "x\ny", "new_str": "z"}) == (
        "diff",
        "-x\n-y\n+z",
    )
    assert arguments_preview({"path": "a", "content": "print(1)"}) == ("code", "print(1)")
    assert arguments_preview({}) == ("", "")
    body = "".join(f"line {n}\n" for n in range(2000))
    assert arguments_preview({"code": body}) == ("code", body), "an approval hides nothing"
    kind, text = arguments_preview({"pattern": "x" * 10_000})
    assert kind == "json" and len(text) > 10_000


def test_an_approval_says_when_the_file_runs_code_later():
    from copilot_nb.events import ApprovalNeeded

    loop = asyncio.new_event_loop()
    try:
        asks = [
            event_ops(
                ApprovalNeeded(
                    call_id="w1",
                    name="write_file",
                    arguments={"path": path, "content": "x"},
                    summary=path,
                    category="edit",
                    decision=loop.create_future(),
                )
            )
            for path in ("conftest.py", "notes.md")
        ]
    finally:
        loop.close()
    assert asks == [
        [["ask", "w1", "edit", "conftest.py runs code later: pytest imports it when tests run"]],
        [["ask", "w1", "edit"]],
    ]


def test_event_ops_leave_usage_and_done_to_the_meter():
    from copilot_nb.events import Done, TextDelta, UsageReported
    from copilot_nb.messages import Usage

    assert event_ops(TextDelta(text="")) == []
    assert event_ops(Done(text="x")) == []
    assert event_ops(UsageReported(usage=Usage(input_tokens=1))) == []


def _record(timers: list[float]) -> Any:
    def call_later(delay: float, callback: Any) -> object:
        timers.append(delay)
        return object()  # a handle with no cancel(): the timer is never due in these tests

    return call_later


def _joined(ops: list[list[Any]]) -> list[list[Any]]:
    joined: list[list[Any]] = []
    for op in ops:
        if joined and op[0] in ("t", "r") and joined[-1][0] == op[0]:
            joined[-1] = [op[0], joined[-1][1] + op[1]]
        else:
            joined.append(list(op))
    return joined


def test_message_sizes_are_small(serve, open_panel):
    """Each batch is a compact JSON list; the comm envelope is ipywidgets' own."""
    panel, front, _ = open_panel(serve([]))
    panel.outbox.put(["t", "abc"])
    (message,) = front.custom()
    assert json.dumps(message, separators=(",", ":")) == '{"ops":[["t","abc"]]}'


def _message(data: dict[str, Any]) -> dict[str, Any]:
    """A comm_msg from the front end, as the kernel hands it to the comm."""
    return {"content": {"comm_id": "", "data": data}, "buffers": []}


# --- in a real kernel -----------------------------------------------------------------------


@pytest.mark.kernel
def test_in_a_kernel_the_panel_runs_turns_as_tasks_and_shares_the_cells_conversation(
    serve, tmp_path
):
    from tests.kernel_session import KernelSession, scripted_env

    server = serve([reply("panel " * 300, chunk_size=5, delay=0.01), reply("from the cell")])
    env = scripted_env(server)
    kernel = KernelSession(tmp_path, {**env, "OPENAI_API_KEY": "k"})
    try:
        opened = kernel.execute(
            "import copilot_nb\npanel = copilot_nb.chat(sidebar=False)\nprint(panel.widget.model_id)"
        )
        assert opened.status == "ok", opened.reply["content"]
        model_id = opened.stdout.strip()
        message = kernel.client.session.msg(
            "comm_msg",
            {
                "comm_id": model_id,
                "data": {"method": "custom", "content": {"kind": "prompt", "text": "hi"}},
            },
        )
        kernel.client.shell_channel.send(message)
        quick = kernel.execute("1 + 1", timeout=10)  # the kernel stays usable during the turn
        assert quick.status == "ok"
        assert (
            kernel.execute("panel.busy").of_type("execute_result")[0]["content"]["data"][
                "text/plain"
            ]
            == "True"
        )
        ops = _kernel_ops(kernel, model_id, until=["end", "done"])
        assert "".join(op[1] for op in ops if op[0] == "t") == "panel " * 300

        cell = kernel.execute("%%copilot\nand you?")
        assert cell.status == "ok"
        assert [m["role"] for m in server.requests[1].messages] == [
            "system",
            "user",
            "assistant",
            "user",
        ]
    finally:
        kernel.close()


@pytest.mark.kernel
def test_in_a_kernel_approvals_sent_to_a_subshell_reach_the_turn(serve, tmp_path):
    """What JupyterLab 4.4+ does with ipykernel 7: comm messages go to a subshell's thread."""
    from tests.kernel_session import KernelSession, scripted_env

    server = serve(
        [reply("", call("write_file", id="w1", path="a.txt", content="new\n")), reply("ok")]
    )
    env = scripted_env(server)
    kernel = KernelSession(tmp_path, {**env, "OPENAI_API_KEY": "k"})
    try:
        opened = kernel.execute(
            "import copilot_nb\npanel = copilot_nb.chat(sidebar=False)\nprint(panel.widget.model_id)"
        )
        model_id = opened.stdout.strip()
        client = kernel.client
        client.control_channel.send(client.session.msg("create_subshell_request", {}))
        subshell = client.control_channel.get_msg(timeout=10)["content"]["subshell_id"]

        def say(**content: Any) -> None:
            data = {"method": "custom", "content": content}
            message = client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
            message["header"]["subshell_id"] = subshell
            client.shell_channel.send(message)

        say(kind="prompt", text="write a.txt")
        _kernel_ops(kernel, model_id, until=["ask", "w1", "edit"])
        say(kind="approve", id="w1")
        ops = _kernel_ops(kernel, model_id, until=["end", "done"], timeout=10)
        assert ["asked", "w1", True] in ops
        assert (tmp_path / "a.txt").read_text() == "new\n"
    finally:
        kernel.close()


RECORD_TURNS = """
import copilot_nb
from copilot_nb.jupyter.magics import session as kernel_session

session = kernel_session()
turns, turn = [], session.turn

def recording(prompt, **options):
    policy = options["approvals"] or session.approvals
    turns.append((prompt, type(options["approver"]).__name__, policy.edit))
    return turn(prompt, **options)

session.turn = recording
panel = copilot_nb.chat(sidebar=False)
print(panel.widget.model_id)
"""


@pytest.mark.kernel
def test_in_a_kernel_cells_and_the_panel_take_the_sessions_one_turn_path(serve, tmp_path):
    """A `--yes` cell, a panel turn, a plain cell: each a `session.turn` with its own approver;
    the cell's `--yes` holds for that cell only."""
    from tests.kernel_session import KernelSession, scripted_env

    def write(name: str, id: str) -> Any:
        return reply("", call("write_file", id=id, path=name, content=f"{name}\n"))

    server = serve(
        [
            *(write("a.txt", "w1"), reply("wrote a")),
            *(write("b.txt", "w2"), reply("wrote b")),
            *(write("c.txt", "w3"), reply("left c")),
        ]
    )
    kernel = KernelSession(tmp_path, scripted_env(server))
    try:
        opened = kernel.execute(RECORD_TURNS)
        assert opened.status == "ok", opened.reply["content"]
        model_id = opened.stdout.strip()
        assert kernel.execute("%%copilot --yes\nwrite a.txt").status == "ok"
        assert (tmp_path / "a.txt").read_text() == "a.txt\n"

        content = {"kind": "prompt", "text": "write b.txt"}
        data = {"method": "custom", "content": content}
        message = kernel.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        kernel.client.shell_channel.send(message)
        _kernel_ops(kernel, model_id, until=["ask", "w2", "edit"])  # --yes did not carry over
        data["content"] = {"kind": "approve", "id": "w2"}
        message = kernel.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        kernel.client.shell_channel.send(message)
        _kernel_ops(kernel, model_id, until=["end", "done"])
        assert (tmp_path / "b.txt").read_text() == "b.txt\n"

        cell = kernel.execute("%%copilot\nwrite c.txt")  # headless: nobody to ask, so denied
        assert cell.status == "ok" and not (tmp_path / "c.txt").exists()
        shown = kernel.execute("print(turns, session.approvals.edit, session.agent.approvals.edit)")
        assert shown.stdout.strip() == (
            "[('write a.txt', 'CellApprover', 'allow'), ('write b.txt', 'ChatPanel', 'ask'), "
            "('write c.txt', 'CellApprover', 'ask')] ask ask"
        )
    finally:
        kernel.close()


def _kernel_ops(kernel: Any, model_id: str, until: list[Any], timeout: float = 30) -> list[Any]:
    """Ops the panel's widget sent over iopub, until the given op; nothing else may be printed."""
    import queue

    ops: list[Any] = []
    deadline = time.monotonic() + timeout
    while until not in ops:
        assert time.monotonic() < deadline, f"no {until} within {timeout}s; last ops {ops[-3:]}"
        try:
            message = kernel.client.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        assert message["msg_type"] not in ("stream", "error"), message["content"]
        content = message["content"]
        if message["msg_type"] == "comm_msg" and content["comm_id"] == model_id:
            ops.extend(content["data"].get("content", {}).get("ops", []))
    return ops


def test_a_cell_edit_shows_as_a_diff_in_the_panel():
    from copilot_nb.events import CellChanged
    from copilot_nb.jupyter.panel.feed import event_ops

    ops = event_ops(CellChanged(notebook="a.ipynb", cell_id="c1", change="edited", diff="-x\n+y\n"))
    assert ops == [["diff", "a.ipynb cell c1", "-x\n+y\n"]]


async def test_the_model_picker_is_filled_from_the_providers_model_list(serve, open_panel):
    server = serve([], model_name="llama3.1:8b")
    panel, _, _ = open_panel(server)
    assert panel.widget.models == ["openai:scripted", "offline"]
    task = panel.discover_models()
    assert task is not None
    await task
    assert panel.widget.models == ["openai:scripted", "offline", "openai:llama3.1:8b"]


async def test_a_provider_without_a_model_list_leaves_the_picker_as_it_was(open_panel, serve):
    from copilot_nb.models.openai import OpenAIChat

    server = serve([])
    panel, _, _ = open_panel(
        server, resolve=lambda spec: OpenAIChat("x", base_url="http://127.0.0.1:9/v1")
    )
    await panel.discover_models()
    assert panel.widget.models == ["openai:scripted", "offline"]
