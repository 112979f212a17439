"""The chat panel in a real kernel: turns run as tasks, comm messages from subshells reach them,
and cells and the panel take the session's one turn path."""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.kernel_session import KernelSession, scripted_env

pytestmark = pytest.mark.kernel


def test_in_a_kernel_the_panel_runs_turns_as_tasks_and_shares_the_cells_conversation(
    serve, tmp_path
):

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
        ops = _kernel_ops(kernel, model_id, until=END)
        assert _text(ops) == "panel " * 300

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


def test_in_a_kernel_approvals_sent_to_a_subshell_reach_the_turn(serve, tmp_path):
    """What JupyterLab 4.4+ does with ipykernel 7: comm messages go to a subshell's thread."""

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
        _kernel_ops(kernel, model_id, until=_asking("w1"))
        say(kind="approve", id="w1")
        ops = _kernel_ops(kernel, model_id, until=END, timeout=10)
        assert {"op": "asked", "id": "w1", "approved": True} in ops
        assert (tmp_path / "a.txt").read_text() == "new\n"
    finally:
        kernel.close()


def test_in_a_kernel_a_cells_turn_shows_in_the_open_panel_as_it_happens(serve, tmp_path):
    """The cell's turn enters the panel's mirror as its first stage: the panel shows the
    cell's words, the answer and how it ended, and its own next turn is not shown twice."""

    server = serve([reply("from the cell"), reply("from the panel")])
    kernel = KernelSession(tmp_path, {**scripted_env(server), "OPENAI_API_KEY": "k"})
    try:
        opened = kernel.execute(
            "import copilot_nb\npanel = copilot_nb.chat(sidebar=False)\nprint(panel.widget.model_id)"
        )
        assert opened.status == "ok", opened.reply["content"]
        model_id = opened.stdout.strip()
        kernel.client.execute("%%copilot\nhello from a cell")
        ops = _kernel_ops(kernel, model_id, until=END)
        assert ops[0] == {"op": "user", "text": "hello from a cell"}
        assert _text(ops) == "from the cell"

        content = {"kind": "prompt", "text": "and the panel"}
        data = {"method": "custom", "content": content}
        message = kernel.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        kernel.client.shell_channel.send(message)
        ops = _kernel_ops(kernel, model_id, until=END)
        assert [op for op in ops if op["op"] in ("user", "end")] == [
            {"op": "user", "text": "and the panel"},
            END,
        ], "the panel's own turn, shown once"
        assert _text(ops) == "from the panel"
    finally:
        kernel.close()


RECORD_TURNS = """
import copilot_nb
from copilot_nb.jupyter.extension import session as kernel_session

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


def test_in_a_kernel_cells_and_the_panel_take_the_sessions_one_turn_path(serve, tmp_path):
    """A `--yes` cell, a panel turn, a plain cell: each a `session.turn` with its own approver;
    the cell's `--yes` holds for that cell only."""

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
        _kernel_ops(kernel, model_id, until=_asking("w2"))  # --yes did not carry over
        data["content"] = {"kind": "approve", "id": "w2"}
        message = kernel.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        kernel.client.shell_channel.send(message)
        _kernel_ops(kernel, model_id, until=END)
        assert (tmp_path / "b.txt").read_text() == "b.txt\n"

        cell = kernel.execute("%%copilot\nwrite c.txt")  # headless: nobody to ask, so denied
        assert cell.status == "ok" and not (tmp_path / "c.txt").exists()
        shown = kernel.execute("print(turns, session.approvals.edit, session.agent.approvals.edit)")
        assert shown.stdout.strip() == (
            "[('write a.txt', 'CellApprover', 'allow'), ('write b.txt', 'ChatPanel', 'review'), "
            "('write c.txt', 'CellApprover', 'review')] review review"
        )
    finally:
        kernel.close()


END = {"op": "end", "status": "done"}


def _asking(call_id: str) -> dict[str, Any]:
    return {"op": "ask", "id": call_id, "category": "edit", "warning": ""}


def _text(ops: list[dict[str, Any]]) -> str:
    return "".join(op["text"] for op in ops if op["op"] == "text")


def _kernel_ops(
    kernel: Any, model_id: str, until: dict[str, Any], timeout: float = 30
) -> list[dict[str, Any]]:
    """Ops the panel's widget sent over iopub, until the given op; nothing else may be printed."""

    ops: list[dict[str, Any]] = []
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
            data = content["data"].get("content") or {}
            ops.extend(data.get("ops", []) if data.get("kind") == "ops" else [])
    return ops
