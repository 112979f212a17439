"""A long run in a real kernel: run_code returns its handle and output so far after a short wait,
the turn goes on while the kernel computes, wait_run returns the end, and a run outlives the turn
that started it: stopping the turn leaves it going, and the next turn is told how it ended."""

from __future__ import annotations

import time
from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.patience import patient

pytestmark = pytest.mark.kernel

LONG = (
    "import time\n"
    "for i in range(25):\n"
    "    print('epoch', i, flush=True)\n"
    "    time.sleep(1)\n"
    "trained = 'weights'\n"
    "trained"
)


def at(arrivals: list[float], step: Any) -> Any:
    """The step, noting when its request arrived."""

    def respond(_request: Any) -> Any:
        arrivals.append(time.monotonic())
        return step

    return respond


def test_code_printing_for_25_s_returns_its_output_so_far_and_the_turn_goes_on(
    serve, kernel_for
) -> None:
    arrivals: list[float] = []
    server = serve(
        [
            at(arrivals, reply("", call("run_code", id="long", code=LONG, timeout=120))),
            at(arrivals, reply("", call("list_variables", id="look"))),
            at(arrivals, reply("", call("wait_run", id="wait", handle="run-1", timeout=120))),
            at(arrivals, reply("Trained.")),
        ]
    )
    kernel = kernel_for(server)

    cell = kernel.execute("%%copilot --yes\ntrain it", timeout=120)

    assert cell.status == "ok", cell.reply["content"]
    first = server.requests[1].tool_results["long"]
    assert "run-1 (run_code) is still running after" in first, first
    assert "stdout so far:\nepoch 0\n" in first
    assert "epoch 24" not in first
    returned = arrivals[1] - arrivals[0]
    assert returned < patient(14), f"run_code returned after {returned:.1f} s"
    looked = server.requests[2].tool_results["look"]
    assert "variables in the kernel" in looked or "no user variables" in looked
    assert arrivals[2] - arrivals[0] < 20, "the next tool call completed while the code ran"
    final = server.requests[3].tool_results["wait"]
    assert "epoch 24" in final and "result:\n'weights'" in final, final
    assert kernel.execute("print(trained)").stdout == "weights\n", "its result is in the namespace"
    server.assert_complete()


def test_stopping_the_turn_leaves_the_run_going_and_the_next_turn_is_told_how_it_ended(
    serve, kernel_for
) -> None:
    server = serve(
        [
            reply("", call("run_code", id="long", code=SHORTER, timeout=60)),
            reply("", call("wait_run", id="wait", handle="run-1", timeout=60)),
            reply("It finished."),
        ]
    )
    kernel = kernel_for(server)
    opened = kernel.execute(
        "%config CopilotMagics.run_wait = 1\n"
        "%config CopilotMagics.approve_execute = 'allow'\n"
        "import copilot_nb\n"
        "panel = copilot_nb.chat(sidebar=False)\n"
        "task = panel.send('count')"
    )
    assert opened.status == "ok", opened.reply["content"]
    deadline = time.monotonic() + patient(30)
    while len(server.requests) < 2 and time.monotonic() < deadline:  # the turn is a task
        time.sleep(0.05)
    assert len(server.requests) == 2, "run_code returned its handle, and the model waits on it"
    stopped = kernel.execute(
        "import asyncio\n"
        "panel.stop()\n"
        "await asyncio.wait({task}, timeout=10)\n"
        "print(task.done(), 'late' in globals())"
    )
    assert stopped.stdout == "True False\n", "the turn ended while its run went on"
    ended = kernel.execute(
        "import time\n"
        "deadline = time.monotonic() + 30\n"
        "while 'late' not in globals() and time.monotonic() < deadline:\n"
        "    time.sleep(0.1)\n"
        "print(late)"
    )
    assert ended.stdout == "7\n", "stopping the turn did not stop the run"

    cell = kernel.execute("%%copilot\nhow did it go?", timeout=60)

    assert cell.status == "ok", cell.reply["content"]
    asked = server.requests[2].messages[-1]["content"]
    text = asked if isinstance(asked, str) else str(asked)
    assert "run-1 (run_code) ended after" in text, text
    assert "count 7" in text and "result:\n7" in text, text
    server.assert_complete()


SHORTER = (
    "import time\n"
    "for i in range(8):\n"
    "    print('count', i, flush=True)\n"
    "    time.sleep(0.5)\n"
    "late = 7\n"
    "late"
)


def test_the_kernels_interrupt_stops_a_run_that_outlived_its_turn(serve, kernel_for) -> None:
    forever = "import time\nwhile True:\n    time.sleep(0.05)"
    server = serve(
        [reply("", call("run_code", id="loop", code=forever, timeout=120)), reply("Started.")]
    )
    kernel = kernel_for(server)
    assert kernel.execute("%config CopilotMagics.run_wait = 0.5").status == "ok"
    assert kernel.execute("%%copilot --yes\nloop").status == "ok"
    assert "run-1 (run_code) is still running" in server.requests[1].tool_results["loop"]

    kernel.manager.interrupt_kernel()  # the kernel is idle: only the run is there to stop

    ended = kernel.execute(
        "from copilot_nb.tools.kernel.runs import runs_of\n"
        "import asyncio\n"
        "run = runs_of(get_ipython()).get('run-1')\n"
        "await asyncio.wait({run.outcome}, timeout=10)\n"
        "print(run.running, run.result.error)"
    )
    assert ended.stdout.startswith("False Stopped: stopped by the kernel's interrupt"), ended.stdout
