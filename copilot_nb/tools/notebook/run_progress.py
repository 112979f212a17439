"""A cell the agent runs in the background shows its output as it comes, and for how long it has
run, in the open notebook: the cell that runs is where the user looks.

Every `TICK` seconds the cell's outputs are set to what the run printed so far and a last line
saying it runs (`set_outputs`, with the source that runs as `expected`, as the end's outputs
are). The first refusal (the user edited or deleted the cell, or closed the notebook) ends the
updates for good; when the run ends its own outputs replace these (`run_cell.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ...errors import ToolError
from ..kernel.runs import Run

TICK = 1.0
"""Seconds between updates of the cell."""
MAX_CHARS = 20_000
"""Characters of each stream shown while it runs (the last ones)."""
_FOLLOWING: set[asyncio.Future[None]] = set()


def show_progress(view: Any, cell_id: str, source: str, run: Run) -> None:
    """Start updating the open cell while `run` goes on."""
    task = asyncio.ensure_future(_follow(view, cell_id, source, run))
    _FOLLOWING.add(task)
    task.add_done_callback(_FOLLOWING.discard)


async def _follow(view: Any, cell_id: str, source: str, run: Run) -> None:
    while run.result is None:  # the code runs (its end's outputs are being put in after)
        try:
            await view.request(
                "set_outputs", cell_id=cell_id, expected=source, outputs=outputs_so_far(run)
            )
        except ToolError:
            return  # the user's edit wins: the cell is theirs again
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(run.outcome), TICK)


def outputs_so_far(run: Run) -> list[dict[str, Any]]:
    """What the run printed so far, as nbformat streams, and a line saying it still runs."""
    outputs: list[dict[str, Any]] = []
    for name in ("stdout", "stderr"):
        text = run.sink.text(name)[-MAX_CHARS:]
        if text:
            outputs.append({"output_type": "stream", "name": name, "text": text})
    going = f"▶ {run.handle}, run by the agent: {run.elapsed():.0f} s so far"
    outputs.append({"output_type": "display_data", "data": {"text/plain": going}, "metadata": {}})
    return outputs
