"""A subagent turn in a real kernel: the child's calls under the parent's line in the cell, and
an interrupt while the child works stops both, leaving the conversation valid."""

from __future__ import annotations

import pytest

from copilot_nb.testing import call, reply
from tests.helpers import wait_until

pytestmark = pytest.mark.kernel


def test_the_childs_calls_show_under_the_delegate_line(serve, kernel_for, tmp_path):
    (tmp_path / "todo.py").write_text("# TODO: empty input\n")
    server = serve(
        [
            reply("", call("delegate", id="d1", task="Find the TODO.")),
            reply("", call("read_file", id="r1", path="todo.py")),
            reply("todo.py line 1."),
            reply("The TODO is in todo.py."),
        ]
    )
    kernel = kernel_for(server)
    run = kernel.execute("%%copilot\nwhere is the TODO?")
    assert run.status == "ok", run.reply["content"]
    shown = "".join(run.final_displays().values())
    assert shown.index("delegate") < shown.index("↳ read_file") < shown.index("The TODO is")


def test_an_interrupt_while_the_child_works_stops_it_and_the_next_cell_works(
    serve, kernel_for, tmp_path
):
    server = serve(
        [
            reply("", call("delegate", id="d1", task="Think for a long time.")),
            reply("thinking " * 2000, chunk_size=5, delay=0.01),
            reply("Back again."),
        ]
    )
    kernel = kernel_for(server)
    msg_id = kernel.send("%%copilot\nask a subagent")
    wait_until(lambda: len(server.requests) >= 2, 30, what="the child's long answer is streaming")
    assert len(server.requests) == 2
    kernel.manager.interrupt_kernel()
    interrupted = kernel.collect(msg_id, timeout=30)
    assert interrupted.status == "error"

    after = kernel.execute("%%copilot\nare you there?")
    assert after.status == "ok"
    assert "Back again." in "".join(after.final_displays().values())
    roles = [m["role"] for m in server.requests[-1].messages]
    assert roles[-3:] == ["assistant", "tool", "user"], "the delegate call was closed"
