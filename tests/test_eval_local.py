"""What `make eval-local` found in the harness: against a slow real server a task runs out of time,
and the task after it must still run (the interrupted cell's end aborted the next cell's request,
which failed as "could not prepare the kernel: : ")."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from copilot_nb.testing import reply
from evals.kernel import Kernel
from evals.run import run

pytestmark = pytest.mark.external

NAME = "df_total_revenue"
TIMEOUT = 5.0
"""Seconds for the task: its first round (a scripted reply, the call it asks for and the next
request) took 0.9 s here; the task then waits for the stalled server until this runs out."""


def test_a_cell_past_its_time_is_interrupted_and_the_next_cell_runs(tmp_path: Path) -> None:
    kernel = Kernel(tmp_path, {})
    try:
        with pytest.raises(TimeoutError, match="did not finish within 1 s"):
            kernel.execute("import time\nfor _ in range(600):\n    time.sleep(0.05)", timeout=1)
        after = kernel.execute("print('next task')")
        assert after.status == "ok", after.error
        assert after.stdout.strip() == "next task"
    finally:
        kernel.close()


@pytest.mark.kernel
def test_a_task_out_of_time_still_counts_the_rounds_it_made() -> None:
    """Against a slow server a task may run out of time after some requests: its row counts
    them (it said 0 rounds, as if the model was never asked)."""
    release = threading.Event()

    def stall(request):
        release.wait(2 * TIMEOUT)  # slower than the task may take: the harness gives up first
        return reply("too late")

    try:
        [result] = run(
            "scripted",
            names=[NAME],
            script=lambda task: [task.solution[0], stall],
            task_timeout=TIMEOUT,
        )
    finally:
        release.set()
    assert result.reason == f"the kernel did not finish within {TIMEOUT:.0f} s"
    assert not result.ok and result.rounds >= 1


def test_each_question_a_cell_asks_is_answered_as_soon_as_it_is_asked(tmp_path: Path) -> None:
    """The harness answers the kernel's `input()` when its request arrives, not at the next turn
    of a 0.2 s poll: 50 questions took 10 s that way, most of a scripted run's approvals."""
    kernel = Kernel(tmp_path, {})
    try:
        started = time.monotonic()
        asked = kernel.execute(
            "said = [input() for _ in range(50)]\nprint(len(said), said[0], said[-1])",
            answers=[f"a{n}" for n in range(50)],
        )
        seconds = time.monotonic() - started
    finally:
        kernel.close()
    assert asked.status == "ok", asked.error
    assert asked.stdout.split() == ["50", "a0", "a49"]
    assert seconds < 5, f"50 answers took {seconds:.1f} s"
