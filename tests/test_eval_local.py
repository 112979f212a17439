"""What `make eval-local` found in the harness: against a slow real server a task runs out of time,
and the task after it must still run (the interrupted cell's end aborted the next cell's request,
which failed as "could not prepare the kernel: : ")."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.kernel import Kernel


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
