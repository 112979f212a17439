"""An approval a `%%copilot` cell asks for can be answered in every front end: buttons in a
notebook, `input()` in `jupyter console`, and a denial at once where nobody is at the keyboard.

The kernel tests drive a real ipykernel through jupyter_client, as each front end does."""

from __future__ import annotations

import queue
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest

from copilot_nb.jupyter.approval_prompt import (
    NOBODY,
    choose_prompt,
    current_request,
    from_notebook,
)
from copilot_nb.testing import call, reply
from tests.helpers import input_request
from tests.kernel_session import KernelSession

WRITE = "%%copilot\nwrite notes.txt"
"""A cell without --yes whose model writes a file, which needs the user's approval."""


def write_script() -> list[Any]:
    return [
        reply("", call("write_file", id="w", path="notes.txt", content="approved\n")),
        reply("Done."),
    ]


def buttons(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Button descriptions to comm ids, from the widgets' comm_open messages on iopub."""
    return {
        m["content"]["data"]["state"]["description"]: m["content"]["comm_id"]
        for m in messages
        if m["msg_type"] == "comm_open"
        and m["content"].get("target_name") == "jupyter.widget"
        and m["content"]["data"].get("state", {}).get("_model_name") == "ButtonModel"
    }


def no_input_request(kernel: KernelSession) -> bool:
    try:
        kernel.client.get_stdin_msg(timeout=0.2)
    except queue.Empty:
        return True
    return False


@pytest.mark.kernel
@pytest.mark.parametrize(("answer", "written"), [("y", True), ("n", False)])
def test_in_a_console_the_cell_asks_with_input_and_the_answer_decides(
    serve, kernel_for, tmp_path: Path, answer: str, written: bool
) -> None:
    server = serve(write_script())
    kernel = kernel_for(server)
    msg_id = kernel.send(WRITE, allow_stdin=True)  # jupyter console: stdin, no metadata
    asked = input_request(kernel, msg_id)
    assert asked["content"]["prompt"] == (
        "write_file wants to change files: notes.txt. Allow? [y/N] "
    )
    kernel.client.input(answer)
    run = kernel.collect(msg_id, timeout=30)
    assert run.status == "ok"
    assert (tmp_path / "notes.txt").exists() is written
    assert buttons(run.messages) == {}
    assert "write_file wants to change files: notes.txt" in run.stdout  # the whole request
    outcome = server.requests[1].messages[-1]["content"]
    assert ("denied" in outcome) is not written


@pytest.mark.kernel
def test_in_a_notebook_the_cell_shows_buttons_and_approve_writes(
    serve, kernel_for, tmp_path: Path
) -> None:
    kernel = kernel_for(serve(write_script()))
    msg_id = kernel.send(WRITE, allow_stdin=True, metadata={"cellId": "abc"})
    seen = kernel.wait_for(msg_id, "comm_open", timeout=30)
    while "Approve" not in buttons(seen):
        seen += kernel.wait_for(msg_id, "comm_open", timeout=30)
    assert no_input_request(kernel)
    kernel.click(buttons(seen)["Approve"])
    run = kernel.collect(msg_id, timeout=30)
    assert run.status == "ok"
    assert (tmp_path / "notes.txt").read_text() == "approved\n"
    assert no_input_request(kernel)


@pytest.mark.kernel
def test_headless_the_cell_is_denied_at_once(serve, kernel_for, tmp_path: Path) -> None:
    server = serve(write_script())
    kernel = kernel_for(server)
    # nbclient, nbval: no stdin; a hang fails here after 60 s
    run = kernel.collect(kernel.send(WRITE, allow_stdin=False), timeout=60)
    assert run.status == "ok"
    assert not (tmp_path / "notes.txt").exists()
    assert buttons(run.messages) == {} and no_input_request(kernel)
    assert NOBODY in server.requests[1].messages[-1]["content"]


@pytest.mark.parametrize(
    ("mode", "in_kernel", "stdin", "drawn", "installed", "expected"),
    [
        ("auto", True, False, True, True, "deny"),  # nbclient: nobody answers, whatever it says
        ("widget", True, False, True, True, "deny"),
        ("input", True, False, False, True, "deny"),
        ("auto", True, True, True, True, "widget"),  # JupyterLab, Notebook 7, VS Code
        ("auto", True, True, True, False, "input"),  # a notebook without ipywidgets
        ("auto", True, True, False, True, "input"),  # jupyter console
        ("auto", False, True, False, True, "input"),  # terminal IPython
        ("auto", False, False, True, True, "input"),  # no kernel: stdin is the terminal's
        ("widget", True, True, False, True, "widget"),  # forced
        ("input", True, True, True, True, "input"),  # forced
    ],
)
def test_the_prompt_is_one_somebody_can_answer(
    mode: Any, in_kernel: bool, stdin: bool, drawn: bool, installed: bool, expected: str
) -> None:
    assert (
        choose_prompt(
            mode,
            in_kernel=in_kernel,
            stdin_allowed=stdin,
            widgets_drawn=drawn,
            widgets_installed=installed,
        )
        == expected
    )


NOTEBOOK = {"header": {"msg_type": "execute_request"}, "metadata": {"cellId": "abc"}}
CONSOLE = {"header": {"msg_type": "execute_request"}, "metadata": {}}


class OldKernel:
    """ipykernel 5: the request in `_parent_header`, no `get_parent`."""

    def __init__(self, parent: dict[str, Any]) -> None:
        self._parent_header = parent


class Kernel6:
    """ipykernel 6: `get_parent` needs the channel; `_parent_header` warns it is deprecated."""

    def __init__(self, parent: dict[str, Any]) -> None:
        self.parent = parent

    def get_parent(self, channel: str) -> dict[str, Any]:
        return self.parent if channel == "shell" else {}

    @property
    def _parent_header(self) -> dict[str, Any]:
        warnings.warn("use get_parent", DeprecationWarning, stacklevel=2)
        return self.parent


@pytest.mark.parametrize(
    "make", [OldKernel, Kernel6, lambda p: SimpleNamespace(get_parent=lambda: p)]
)
def test_the_running_request_is_read_from_every_ipykernel(make: Any) -> None:
    assert current_request(make(NOTEBOOK)) == NOTEBOOK
    assert from_notebook(make(NOTEBOOK)) and not from_notebook(make(CONSOLE))
    assert not from_notebook(SimpleNamespace()) and current_request(object()) == {}


def widget_states(messages: list[dict[str, Any]], model: str) -> dict[str, dict[str, Any]]:
    """The states of the widgets of one kind the cell opened, by comm id."""
    return {
        m["content"]["comm_id"]: m["content"]["data"].get("state", {})
        for m in messages
        if m["msg_type"] == "comm_open"
        and m["content"]["data"].get("state", {}).get("_model_name") == model
    }


def wait_for_prompt(kernel: KernelSession, msg_id: str) -> list[dict[str, Any]]:
    """The messages of the cell up to its next approval prompt (the box, opened after all its
    widgets)."""
    seen = kernel.wait_for(msg_id, "comm_open", timeout=30)
    while not widget_states(seen, "VBoxModel"):
        seen += kernel.wait_for(msg_id, "comm_open", timeout=30)
    return seen


def type_into(kernel: KernelSession, model_id: str, text: str) -> None:
    """Type into an ipywidgets Text, as the browser does: the model's new value."""
    data = {"method": "update", "state": {"value": text}, "buffer_paths": []}
    message = kernel.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
    kernel.client.shell_channel.send(message)


@pytest.mark.kernel
def test_run_cells_approval_shows_the_code_it_will_run_and_its_answer_where_it_asked(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "run.ipynb"
    cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("print('six')")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    server = serve([reply("", call("run_cell", id="r", cell_id="#2")), reply("It printed six.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    msg_id = kernel.send(
        "%%copilot\nrun the second cell", allow_stdin=True, metadata={"cellId": "abc"}
    )
    seen = wait_for_prompt(kernel, msg_id)
    (shown,) = [
        s["value"] for s in widget_states(seen, "HTMLModel").values() if "run_cell" in s["value"]
    ]
    assert "run_cell wants to run code: cell 2 of 2 in run.ipynb" in shown
    assert "print(&#x27;six&#x27;)" in shown and "cell_id" not in shown
    kernel.click(buttons(seen)["Approve"])
    run = kernel.collect(msg_id, timeout=30)
    assert run.status == "ok"
    assert "[stdout]\nsix" in server.requests[-1].tool_results["r"]
    ran = nbformat.read(notebook, as_version=4).cells[1]
    assert ran.outputs[0]["text"] == "six\n"
    count = run.reply["content"]["execution_count"]
    assert ran.execution_count == count - 1, "a number of its own, before the %%copilot cell's"
    emptied = [
        m
        for m in run.of_type("comm_msg")
        if m["content"]["data"].get("state", {}).get("children") == []
    ]
    assert emptied, "the buttons go away once answered"
    transcript = "\n".join(run.final_displays().values())  # the widget shows as its repr
    assert "✓ run_cell #2" in transcript and "⏳" not in transcript


@pytest.mark.kernel
def test_a_plan_in_a_cell_is_asked_in_words_and_revise_sends_the_users_words(
    serve, kernel_for
) -> None:
    server = serve([reply("1. write a.txt"), reply("1. write b.txt")])
    kernel = kernel_for(server)
    msg_id = kernel.send(
        "%%copilot --mode plan\nmake a file", allow_stdin=True, metadata={"cellId": "abc"}
    )
    seen = wait_for_prompt(kernel, msg_id)
    assert {"Approve", "Deny", "Revise"} <= set(buttons(seen))
    html = " ".join(s["value"] for s in widget_states(seen, "HTMLModel").values())
    assert "Carry out this plan?" in html and "1. write a.txt" not in html, "asked once"
    (text_box,) = widget_states(seen, "TextModel")
    type_into(kernel, text_box, "call it b.txt")
    kernel.click(buttons(seen)["Revise"])
    seen = wait_for_prompt(kernel, msg_id)
    kernel.click(buttons(seen)["Deny"])
    run = kernel.collect(msg_id, timeout=30)
    assert run.status == "ok"
    assert server.requests[1].messages[-1]["content"].endswith("call it b.txt")
    transcript = "\n".join(run.final_displays().values())  # the widget shows as its repr
    assert "plan — revising: call it b.txt" in transcript and "✗ plan — denied" in transcript
    assert "run this plan" not in transcript.lower()
