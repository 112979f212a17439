"""`%%copilot` in a real kernel (jupyter_client + ipykernel) against a loopback scripted server."""

from __future__ import annotations

import threading
import time

import pytest

from copilot_nb.testing import call, reply
from tests.helpers import button_ids
from tests.html_safety import violations

pytestmark = pytest.mark.kernel


def test_a_copilot_cell_edits_a_file_and_streams_its_output(serve, kernel_for, tmp_path):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    server = serve(
        [
            reply("Let me read it.", call("read_file", id="r", path="hello.py")),
            reply(
                "",
                call(
                    "edit_file",
                    id="e",
                    path="hello.py",
                    old_str="hello, world",
                    new_str="hello, notebook",
                ),
            ),
            reply(
                "Done: the greeting is now " + "**hello, notebook**. " * 30,
                chunk_size=4,
                delay=0.005,
            ),
        ]
    )
    kernel = kernel_for(server)
    run = kernel.execute(
        '%%copilot --yes\nRead hello.py and change the greeting to "hello, notebook".'
    )

    assert run.status == "ok", run.reply["content"]
    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    (final,) = run.final_displays("text/html").values()
    assert "<div>✓ <strong>read_file</strong> <code>hello.py</code>" in final
    assert "<div>✓ <strong>edit_file</strong> <code>hello.py</code>" in final
    assert "<p>Done: the greeting is now <strong>hello, notebook</strong>." in final
    assert "tokens:" in final
    assert ">+print(&quot;hello, notebook&quot;)</span>" in final
    assert violations(final) == []
    (text,) = run.final_displays().values()
    assert "✓ edit_file hello.py" in text and '+print("hello, notebook")' in text
    updates = run.of_type("update_display_data")
    assert 1 <= len(updates) < 60, "streaming updates are throttled, not one per token"
    server.assert_complete()


def test_next_cell_continues_and_new_starts_fresh(serve, kernel_for):
    server = serve([reply("one"), reply("two"), reply("three")])
    kernel = kernel_for(server)
    assert kernel.execute("%%copilot\nfirst").status == "ok"
    assert kernel.execute("%%copilot\nsecond").status == "ok"
    assert kernel.execute("%%copilot --new\nthird").status == "ok"
    counts = [sum(m["role"] == "user" for m in r.messages) for r in server.requests]
    assert counts == [1, 2, 1]


def test_an_interrupt_stops_the_turn_as_stop_does_and_the_next_cell_works(serve, kernel_for):
    server = serve(
        [
            reply("", call("list_directory", id="l1", path=".")),
            reply("counting " * 2000, chunk_size=5, delay=0.01),
            reply("Back again."),
        ]
    )
    kernel = kernel_for(server)
    msg_id = kernel.send("%%copilot\nlist the files, then talk for a long time")
    queued = kernel.send("ran_after_the_stop = True")  # as Run All queues the next cell
    while "counting" not in str(kernel.wait_for(msg_id, "update_display_data", timeout=30)[-1]):
        pass  # until the long answer streams
    kernel.manager.interrupt_kernel()
    interrupted = kernel.collect(msg_id, timeout=30)
    assert interrupted.of_type("error") == [], "a stop, not a traceback"
    assert interrupted.reply["content"]["ename"] == "TurnStopped", "so Run All stops here"
    assert kernel.collect(queued, timeout=30).status == "aborted"
    assert "Traceback" not in interrupted.stdout and "CancelledError" not in interrupted.stdout
    (shown,) = interrupted.final_displays().values()
    assert "counting counting" in shown, "the partial answer stays"
    assert shown.rstrip().endswith("■ Stopped") and shown.count("■ Stopped") == 1

    after = kernel.execute("%%copilot\nare you there?")
    assert after.status == "ok"
    assert kernel.execute("print('ran_after_the_stop' in globals())").stdout == "False\n"
    assert "Back again." in "".join(after.final_displays().values())
    last = server.requests[-1].messages
    assert [m["role"] for m in last][-2:] == ["assistant", "user"]
    assert last[-2]["content"].endswith("[interrupted]")


def test_an_interrupt_is_heard_while_the_server_has_not_begun_to_answer(serve, kernel_for):
    """A local model reading a long prompt sends nothing for a while: the kernel's loop sleeps
    until a byte comes, and Python runs the interrupt's handler only when it wakes."""
    answering = threading.Event()
    server = serve(responder=lambda request: answering.wait(60) and reply("late"))
    kernel = kernel_for(server)
    msg_id = kernel.send("%%copilot\nhello")
    deadline = time.monotonic() + 30
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.02)  # the request has reached the server, which says nothing yet
    interrupted_at = time.monotonic()
    kernel.manager.interrupt_kernel()
    stopped = kernel.collect(msg_id, timeout=30)
    took = time.monotonic() - interrupted_at
    answering.set()
    assert stopped.reply["content"]["ename"] == "TurnStopped"
    assert took < 5, f"the interrupt waited {took:.1f} s for the server"
    (shown,) = stopped.final_displays().values()
    assert shown.rstrip().endswith("■ Stopped")


def test_run_cell_magic_from_code_uses_the_same_coroutine(serve, kernel_for):
    server = serve([reply("from code")])
    kernel = kernel_for(server)
    run = kernel.execute("get_ipython().run_cell_magic('copilot', '', 'hi from code')")
    assert run.status == "ok", run.reply["content"]
    assert "from code" in "".join(run.final_displays().values())


def test_user_mistakes_are_usage_errors_not_tracebacks(serve, kernel_for):
    kernel = kernel_for(serve([]))
    run = kernel.execute("%%copilot\n   ")
    assert run.status == "error"
    assert run.reply["content"]["ename"] == "UsageError"
    bad = kernel.execute("%%copilot --model nosuch:model\nhi")
    assert bad.reply["content"]["ename"] == "UsageError"
    assert "unknown provider" in bad.reply["content"]["evalue"]


def edit_script():
    return [
        reply("", call("edit_file", id="e", path="hello.py", old_str="world", new_str="notebook")),
        reply("Reported."),
    ]


def test_without_a_user_to_ask_an_edit_is_denied_and_reported(serve, kernel_for, tmp_path):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    server = serve(edit_script())
    kernel = kernel_for(server)
    run = kernel.execute("%%copilot\nchange world to notebook")
    assert run.status == "ok"
    assert (tmp_path / "hello.py").read_text() == 'print("hello, world")\n'
    (final,) = run.final_displays("text/html").values()
    assert "<div>✗ <strong>edit_file</strong> <code>hello.py</code> — denied" in final
    result = server.requests[1].messages[-1]["content"]
    assert "nobody could be asked" in result and "--yes" in result


def widget_models(messages: list[dict]) -> list[str]:
    return [
        m["content"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
        for m in messages
        if m["msg_type"] == "display_data"
        and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
    ]


@pytest.mark.parametrize("button", ["Approve", "Deny"])
def test_approve_and_deny_buttons_answer_while_the_cell_runs(serve, kernel_for, tmp_path, button):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    server = serve(edit_script())
    kernel = kernel_for(server)
    msg_id = kernel.send(
        "%%copilot\nchange world to notebook", allow_stdin=True, metadata={"cellId": "c1"}
    )
    seen = kernel.wait_for(msg_id, "display_data", timeout=30)
    while not widget_models(seen):
        seen += kernel.wait_for(msg_id, "display_data", timeout=30)
    kernel.click(button_ids(seen)[button])
    run = kernel.collect(msg_id, timeout=30)
    assert run.status == "ok"
    changed = (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert changed is (button == "Approve")
    outcome = server.requests[1].messages[-1]["content"]
    assert ("denied" in outcome) is (button == "Deny")
