"""What `make eval-local` found in the harness: against a slow real server a task runs out of time,
and the task after it must still run (the interrupted cell's end aborted the next cell's request,
which failed as "could not prepare the kernel: : ")."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from copilot_nb.testing import reply
from evals.kernel import Kernel
from evals.run import run

NAME = "df_total_revenue"
TIMEOUT = 15.0
"""Seconds for the task: its first round (a scripted reply) takes one or two."""


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
