"""What keeping the kernel's state costs: a snapshot before run_code changes a column of a
500 MB DataFrame, the same run when nothing is kept, and the rebuild plan of a 500-cell notebook.

Before run_code runs, the names it assigns or mutates are kept for Undo (`tools/kernel/guard.py`):
that time is added to every run that changes a name, and the copy stays in memory until the
turn's undo is out of reach. With pandas' copy-on-write the copy shares the frame's buffers, so
the run that replaces one column copies that column only; a deep copy (pandas without
copy-on-write) would double the frame. Extra memory is the process's resident size after the
run, less before the snapshot. The rebuild plan reads every cell's source with `ast` and walks
them backwards: its time is what `rebuild_names` and the context block after a restart add.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import psutil  # noqa: E402

from copilot_nb.tools.context import ToolContext  # noqa: E402
from copilot_nb.tools.kernel.execute import run_code_in  # noqa: E402
from copilot_nb.tools.kernel.guard import after_run, before_run  # noqa: E402
from copilot_nb.tools.kernel.names import code_names  # noqa: E402
from copilot_nb.tools.kernel.rebuild import Cell, plan  # noqa: E402
from copilot_nb.tools.kernel.state import kernel_state  # noqa: E402
from copilot_nb.workspace.workspace import Workspace  # noqa: E402

FRAME_BYTES = 500 * 2**20
COLUMNS = 8
CELLS, REPEATS = 500, 20
CODE = "df['c0'] = df['c0'] * 2"


def frame() -> pd.DataFrame:
    rows = FRAME_BYTES // (8 * COLUMNS)
    return pd.DataFrame({f"c{i}": np.arange(rows, dtype=np.float64) for i in range(COLUMNS)})


def rss() -> int:
    gc.collect()
    return int(psutil.Process().memory_info().rss)


def one_run(root: Path, *, limit: int, code: str = CODE) -> tuple[float, float, int, str]:
    """(ms keeping, ms running, extra bytes after, the note) of one run_code on a fresh frame."""
    namespace: dict[str, Any] = {"df": frame()}
    shell = SimpleNamespace(user_ns=namespace, user_ns_hidden={})
    kernel_state(shell).keep_limit = limit
    workspace = Workspace(root)
    workspace.begin_turn("bench")
    ctx = ToolContext(workspace=workspace, namespace=lambda: namespace, shell=shell)
    before = rss()
    began = time.perf_counter()
    kept = before_run(ctx, code, "run_code")
    keeping = time.perf_counter() - began
    began = time.perf_counter()
    asyncio.run(run_code_in(namespace, code, timeout=60))
    running = time.perf_counter() - began
    note = after_run(ctx, code, kept)
    extra = rss() - before
    workspace.undo()
    del namespace["df"]
    return keeping * 1e3, running * 1e3, extra, note


def deep_copy_cost() -> tuple[float, int]:
    """What the same snapshot costs as a deep copy (pandas without copy-on-write)."""
    df = frame()
    before = rss()
    began = time.perf_counter()
    copy = df.copy(deep=True)
    took = time.perf_counter() - began
    extra = rss() - before
    del copy, df
    return took * 1e3, extra


def plan_ms() -> tuple[float, float, int]:
    """(ms first plan, ms plan with the cells read before, cells chosen) for a 500-cell notebook
    whose last cell's name needs a chain of 1 in 10 cells."""
    sources = []
    for i in range(CELLS):
        if i % 10 == 0:
            sources.append(
                f"import math\nstep_{i} = step_{i - 10} + math.sqrt({i})" if i else "step_0 = 0"
            )
        else:
            sources.append(f"other_{i} = [x * {i} for x in range(10)]\nprint(other_{i})")
    cells = [Cell(index=i, id=str(i), source=s) for i, s in enumerate(sources)]
    code_names.cache_clear()
    began = time.perf_counter()
    chosen = plan(cells, [f"step_{CELLS - 10}"])
    first = (time.perf_counter() - began) * 1e3
    times = []
    for _ in range(REPEATS):
        began = time.perf_counter()
        plan(cells, [f"step_{CELLS - 10}"])
        times.append(time.perf_counter() - began)
    return first, statistics.median(times) * 1e3, len(chosen.steps)


def main() -> None:
    print(f"\nkernel state: snapshot before run_code `{CODE}` on a {FRAME_BYTES // 2**20} MB frame")
    with tempfile.TemporaryDirectory() as folder:
        rows = [
            ("kept (copy-on-write, 256 MB limit)", one_run(Path(folder), limit=256 * 2**20)),
            ("nothing kept (--keep 0)", one_run(Path(folder), limit=0)),
        ]
        looked = one_run(Path(folder), limit=256 * 2**20, code="df['c0'].sum()")
    print(f"{'':<38}{'keep ms':>9}{'run ms':>9}{'extra MB':>10}")
    for label, (keeping, running, extra, _) in rows:
        print(f"{label:<38}{keeping:>9.2f}{running:>9.1f}{extra / 2**20:>10.1f}")
    print(
        f"{'a run that changes no name':<38}{looked[0]:>9.2f}{looked[1]:>9.1f}{looked[2] / 2**20:>10.1f}"
    )
    took, extra = deep_copy_cost()
    print(f"{'(a deep copy instead, for comparison)':<38}{took:>9.1f}{'':>9}{extra / 2**20:>10.1f}")
    first, again, chosen = plan_ms()
    print(f"\nrebuild plan, {CELLS}-cell notebook ({chosen} cells chosen)")
    print(f"{'first plan (every cell parsed)':<38}{first:>9.2f} ms")
    print(f"{'again (cells read before)':<38}{again:>9.2f} ms (median of {REPEATS})")


if __name__ == "__main__":
    main()
