"""A code block's Run, in a real kernel, as the page's extension asks for it over the live comm:
its result comes rendered as a notebook output, and what it says Undo puts back has an Undo that
does, once; a Run that keeps nothing promises nothing."""

from __future__ import annotations

import queue
import time
from pathlib import Path
from typing import Any

import pytest

from tests.live_frontend import LiveFrontEnd, wait_until

pytestmark = pytest.mark.kernel

NOTEBOOK = "blocks.ipynb"
CLEAN = (
    "q1, q3 = 1, 3\n"
    "fence = q3 - q1\n"
    "df_clean = [x for x in df_clean if q1 <= x <= q3]\n"
    "print('kept', len(df_clean))\n"
    "len(df_clean)"
)


def said(front: LiveFrontEnd, event: str, block: str) -> dict[str, Any]:
    """What the kernel said about one block's Run, once it has."""
    found: list[dict[str, Any]] = []

    def arrived() -> bool:
        found[:] = [e for e in front.events if e.get("event") == event and e.get("id") == block]
        return bool(found)

    wait_until(arrived, timeout=30, what=f"{event} for {block}")
    return found[-1]


def value(kernel: Any, expression: str) -> str:
    return kernel.execute(f"print(repr({expression}))").stdout.strip()


def test_a_runs_result_is_rendered_and_its_undo_puts_the_variables_back(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    kernel = kernel_for(serve([]), JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute('%config CopilotMagics.approve_execute = "allow"').status == "ok"
    assert kernel.execute("df_clean = [0, 1, 2, 5]").status == "ok"
    front = front_end(kernel, NOTEBOOK, [])

    front.send_event({"event": "run_block", "id": "run-1", "code": CLEAN})
    result = said(front, "run_block_result", "run-1")

    assert result["ok"] is True
    assert "kept 2</pre>" in result["html"] and "2</pre>" in result["html"], result["html"]
    assert result["undo"] == (
        "Undo puts back df_clean as it was before the run. "
        "Undo removes fence, q1, q3 (the run made them)"
    )
    assert "Undo" not in result["output"], "the promise is made once, beside its button"
    assert value(kernel, "df_clean") == "[1, 2]"

    front.send_event({"event": "run_block_undo", "id": "run-1"})
    undone = said(front, "run_block_undone", "run-1")

    assert undone["ok"] is True, undone
    assert undone["text"].startswith("Put back: kernel variables of run_code"), undone
    assert value(kernel, "df_clean") == "[0, 1, 2, 5]"
    assert value(kernel, "[n for n in ('q1', 'q3', 'fence') if n in globals()]") == "[]"

    front.send_event({"event": "run_block_undo", "id": "run-1"})
    wait_until(lambda: len([e for e in front.events if e.get("event") == "run_block_undone"]) == 2)
    again = [e for e in front.events if e.get("event") == "run_block_undone"][-1]
    assert again["ok"] is False and "put back already" in again["text"]


def test_an_undo_leaves_a_variable_the_user_changed_since_and_says_so(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    kernel = kernel_for(serve([]), JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute('%config CopilotMagics.approve_execute = "allow"').status == "ok"
    assert kernel.execute("total = 1").status == "ok"
    front = front_end(kernel, NOTEBOOK, [])

    front.send_event({"event": "run_block", "id": "run-1", "code": "total = total + 10"})
    assert said(front, "run_block_result", "run-1")["undo"].startswith("Undo puts back total")
    assert kernel.execute("total = 100").status == "ok"  # the user's own change
    front.send_event({"event": "run_block_undo", "id": "run-1"})
    undone = said(front, "run_block_undone", "run-1")

    assert undone["ok"] is False
    assert "total changed since the run" in undone["text"]
    assert value(kernel, "total") == "100"


def test_a_run_that_keeps_nothing_promises_no_undo(serve, kernel_for, front_end, tmp_path) -> None:
    kernel = kernel_for(serve([]), JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute('%config CopilotMagics.approve_execute = "allow"').status == "ok"
    front = front_end(kernel, NOTEBOOK, [])

    front.send_event({"event": "run_block", "id": "run-1", "code": "print('hello')"})
    result = said(front, "run_block_result", "run-1")

    assert result["ok"] is True and "hello</pre>" in result["html"]
    assert "undo" not in result and "Undo" not in result["output"]


def panel_ops(kernel: Any, model_id: str, until: str, timeout: float = 30) -> list[dict[str, Any]]:
    """The ops the chat panel sent, until one of kind `until`."""
    ops: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while not any(op["op"] == until for op in ops):
        assert time.monotonic() < deadline, f"no {until} op within {timeout}s; last {ops[-3:]}"
        try:
            message = kernel.client.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        content = message["content"]
        if message["msg_type"] == "comm_msg" and content["comm_id"] == model_id:
            data = content["data"].get("content") or {}
            ops.extend(data.get("ops", []) if data.get("kind") == "ops" else [])
    return ops


def test_a_panel_blocks_card_shows_the_output_and_an_undo_that_puts_it_back(
    serve, kernel_for
) -> None:
    kernel = kernel_for(serve([]))
    assert kernel.execute('%config CopilotMagics.approve_execute = "allow"').status == "ok"
    opened = kernel.execute(
        "df_clean = [0, 1, 2, 5]\nimport copilot_nb\n"
        "panel = copilot_nb.chat(sidebar=False)\nprint(panel.widget.model_id)"
    )
    model_id = opened.stdout.strip()

    def say(**content: Any) -> None:
        data = {"method": "custom", "content": content}
        message = kernel.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        kernel.client.shell_channel.send(message)

    say(kind="run", code=CLEAN)
    ops = panel_ops(kernel, model_id, "undoable")
    done = next(op for op in ops if op["op"] == "done")
    undo = next(op for op in ops if op["op"] == "undoable")

    assert done["ok"] is True and "kept 2</pre>" in done["output"], done
    assert "Undo" not in done["result"], "the promise is made once, beside its button"
    assert undo["id"] == done["id"] and undo["note"].startswith("Undo puts back df_clean")
    assert value(kernel, "df_clean") == "[1, 2]"

    say(kind="undo", id=undo["id"])
    undone = next(op for op in panel_ops(kernel, model_id, "undone") if op["op"] == "undone")

    assert (undone["id"], undone["ok"]) == (undo["id"], True), undone
    assert value(kernel, "df_clean") == "[0, 1, 2, 5]"
