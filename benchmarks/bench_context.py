"""What building the turn's context block costs: a 500-cell notebook and 1,000 variables.

The block (`tools/context_block.py`) is built at the start of every turn, before the request
goes out, so its time adds to every turn's latency. Timed with the notebook as a file on disk
(read through nbformat, as in VS Code or a headless run) and without it, beside the same
notebook's `list_cells` (the tool the model would otherwise call first).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from copilot_nb.agent.prompt.assembly import block_context  # noqa: E402
from copilot_nb.tools.context_block import context_block  # noqa: E402
from copilot_nb.workspace.workspace import Workspace  # noqa: E402

CELLS, VARIABLES, REPEATS = 500, 1000, 30
TARGET_MS = 5.0


def timed(run) -> float:
    """Median milliseconds of `run()` on one event loop (as a turn runs it, on the kernel's)."""

    async def repeat() -> list[float]:
        times = []
        for _ in range(REPEATS):
            began = time.perf_counter()
            await run()
            times.append(time.perf_counter() - began)
        return times

    return statistics.median(asyncio.run(repeat())) * 1e3


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(f"value_{i} = compute({i})") for i in range(CELLS)]
        nbformat.write(nb, root / "big.ipynb")
        namespace = {f"v{i:04d}": list(range(i % 7)) for i in range(VARIABLES)}
        workspace = Workspace(root)
        with_notebook = SimpleNamespace(user_ns={"__session__": "big.ipynb", **namespace})
        without = SimpleNamespace(user_ns=dict(namespace))
        full = block_context(workspace, with_notebook)
        bare = block_context(workspace, without)
        rows = [
            (f"{VARIABLES:,} variables, no notebook", timed(lambda: context_block(bare))),
            (
                f"{CELLS} cells from the file + {VARIABLES:,} variables",
                timed(lambda: context_block(full)),
            ),
        ]
    print(f"\ncontext block build time (median of {REPEATS}; target under {TARGET_MS:g} ms)")
    for label, ms in rows:
        print(f"{label:<44}{ms:>8.2f} ms")


if __name__ == "__main__":
    main()
