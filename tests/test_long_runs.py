"""Runs that outlast their tool call, in process: run_cell's outputs reach a notebook file when
the run ends, the agent cannot change the cell that runs nor start a second run, stop_run stops
one where it is, and what goes on is in the next request's context block."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.errors import ToolError
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.context_block import context_block
from copilot_nb.tools.kernel.run_tools import run_status, stop_run, wait_run
from copilot_nb.tools.kernel.runs import runs_of
from copilot_nb.tools.kernel.tools import run_code
from copilot_nb.tools.notebook.cells import edit_cell, read_cell
from copilot_nb.tools.notebook.run_cell import run_cell
from copilot_nb.workspace.workspace import Workspace

SLOW = (
    "import time\nfor step in range(6):\n    print('step', step, flush=True)\n    time.sleep(0.2)"
)


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SLOW)]
    (tmp_path / "nb.ipynb").write_text(nbformat.writes(notebook))
    namespace: dict[str, Any] = {}
    runs = runs_of(None)
    runs.wait_seconds = 0.3
    yield ToolContext(
        workspace=Workspace(tmp_path),
        current_notebook=lambda: "nb.ipynb",
        namespace=lambda: namespace,
    )
    going = runs.running()
    if going is not None:
        going.stop("the test's end")
    runs.wait_seconds = 10.0


async def test_a_cell_run_in_the_background_gets_its_outputs_in_the_file_when_it_ends(
    ctx: ToolContext, tmp_path: Path
) -> None:
    started = await run_cell(ctx, "#1")
    handle = started.content.split(" ", 1)[0]
    assert "is still running" in started.content and "step 0" in started.content

    await read_cell(ctx, "#1")
    with pytest.raises(ToolError, match=f"cell .* is running as {handle}.*wait_run"):
        await edit_cell(ctx, "#1", old_str="range(6)", new_str="range(1)")
    with pytest.raises(ToolError, match=f"run_code: {handle} .* one run goes at a time"):
        await run_code(ctx, "1 + 1")

    ended = await wait_run(ctx, handle, timeout=30)

    assert "[stdout]\nstep 0\nstep 1" in ended.content and "step 5" in ended.content
    saved = nbformat.read(tmp_path / "nb.ipynb", as_version=4)
    assert saved.cells[0].outputs[0]["text"].endswith("step 5\n"), "its outputs reached the file"
    assert "range(6)" in saved.cells[0].source


async def test_stop_run_stops_a_run_where_it_is_and_what_it_did_stays(ctx: ToolContext) -> None:
    code = "import time\ncount = 0\nwhile True:\n    count += 1\n    time.sleep(0.01)"
    started = await run_code(ctx, code, timeout=60)
    handle = started.content.split(" ", 1)[0]
    assert "running" in (await run_status(ctx)).content

    stopped = await stop_run(ctx, handle)

    assert stopped.is_error and "stopped by the agent after" in stopped.content
    assert ctx.namespace()["count"] > 0, "what it did until then stays done"
    assert (await run_code(ctx, "count > 0")).content == "result:\nTrue", "the next run goes"


async def test_the_next_request_is_told_of_a_run_that_ended_unread(ctx: ToolContext) -> None:
    started = await run_code(ctx, "import time\ntime.sleep(0.6)\nprint('fitted')\n42")
    handle = started.content.split(" ", 1)[0]
    assert "still running" in await context_block(ctx)

    run = runs_of(None).get(handle)
    assert run is not None
    await run.wait(30)
    run.reported = False  # as if the turn had ended before it

    block = await context_block(ctx)
    assert f"{handle} (run_code) ended after" in block
    assert "stdout:\nfitted" in block and "result:\n42" in block
    assert f"{handle} (run_code)" not in await context_block(ctx), "told once"


async def test_a_run_that_ends_in_a_later_turn_is_undone_with_the_turn_that_started_it(
    ctx: ToolContext,
) -> None:
    checkpoints = ctx.workspace.checkpoints
    ctx.namespace()["model"] = "untrained"
    first = checkpoints.begin_turn("train the model")
    started = await run_code(ctx, "import time\ntime.sleep(0.8)\nmodel = 'trained'")
    assert "still running" in started.content
    second = checkpoints.begin_turn("plot the data")  # the user's next turn, while it runs
    assert second is not first, "a turn whose run goes on is not reused by the next"

    run = runs_of(None).running()
    assert run is not None
    await run.wait(30)
    assert ctx.namespace()["model"] == "trained"
    assert len(first.others) == 1 and second.others == []

    assert checkpoints.undo_turn(second) == [], "the later turn has nothing of the run"
    assert ctx.namespace()["model"] == "trained"
    (restored,) = checkpoints.undo()  # the turn that started it puts back what it changed
    assert restored.turn == "train the model" and "model" in restored.path
    assert ctx.namespace()["model"] == "untrained"
