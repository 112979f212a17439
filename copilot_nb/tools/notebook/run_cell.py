"""run_cell: run a notebook cell's current source in the kernel and put its outputs in the cell.

The `%%copilot` cell that runs the agent keeps the kernel busy, so asking the front end to execute
the cell would queue behind it and never run. Instead the source is run here, the way run_code
runs code (`execute.py`: in the user's namespace, on the kernel's thread, with the same timeout
and the kernel's Interrupt), with its printed text, displays (figures included) and result
captured; the outputs are then put into the cell: in the open notebook through the front end, or
in the file. The model gets them summarised as read_cell shows outputs: text cut, images by size,
never base64, secrets masked; the images travel beside the text for a model that accepts them.

Captured output is ordered stdout, stderr, displays, result, error: the order within one run is
not kept across those kinds. The cell gets an execution count of its own, the kernel's next
(`kernel/counter.py`); its metadata records that the agent ran it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import ToolError
from ...events import CallPreview
from ...text import shorten
from ...workspace.notebook_file import cell_source
from ..context import ToolContext
from ..kernel.counter import take_number
from ..kernel.execute import CodeRun, ran_for, run_code_in
from ..kernel.guard import after_run, before_run
from ..kernel.run_outputs import notebook_outputs
from ..kernel.run_tools import follow, refuse_if_busy
from ..kernel.runs import Run
from ..kernel.snapshots import Kept
from ..kernel.state import kernel_state
from ..kernel.tools import is_copilot_cell
from ..redaction.masking import redact_text
from ..registry import ToolOutput, ToolSet, bound_tool
from ..views.outputs import describe_output, output_images
from .cells import find_cell
from .numbering import cell_label, cell_position
from .review import marked, review_of, review_turn
from .run_progress import show_progress
from .store import Opened, commit, conflict_message, open_notebook, stamp

MAX_CELL_TIMEOUT = 600.0
"""Seconds run_cell may be given."""


def cell_run_toolset(ctx: ToolContext) -> ToolSet:
    """run_cell bound to a kernel's context (it needs the shell and the notebook)."""
    return ToolSet([bound_tool(run_cell, ctx, category="execute", describe=cell_to_run)])


async def cell_to_run(ctx: ToolContext, arguments: Mapping[str, Any]) -> CallPreview | None:
    """What run_cell's approval shows: the cell's number and the source that will run (the open
    notebook's current source, unsaved edits included, or the file's), not `{"cell_id": "#6"}`."""
    cell_id, notebook = arguments.get("cell_id"), arguments.get("notebook")
    if not isinstance(cell_id, str) or not isinstance(notebook, (str, type(None))):
        return None
    opened = await open_notebook(ctx, notebook, for_edit=False)
    index, cell = find_cell(opened.loaded, cell_id)
    where = cell_position(index, len(opened.loaded.node.cells))
    return CallPreview(summary=f"{where} in {opened.path}", text=cell_source(cell))


async def run_cell(
    ctx: ToolContext, cell_id: str, timeout: float = 60, notebook: str | None = None
) -> ToolOutput:
    """Run a code cell of the notebook in the kernel and put its outputs into that cell: the
    way to check a cell you wrote or changed. It runs in the user's namespace (their variables
    change), so do not run cells that are slow or change data unasked.

    It runs the cell's current source (unsaved edits included) in the user's namespace, as the
    user running the cell would; what it defines stays defined. A run past the timeout is
    stopped; what it did until then stays done. A run still going after a few seconds returns
    its handle and goes on; follow it with wait_run, and its outputs go into the cell when it ends.

    Args:
        cell_id: Its id from list_cells, or "#N" (numbered from 1).
        timeout: Seconds before the run is stopped (at most 600).
        notebook: A .ipynb path; defaults to this kernel's notebook.
    """
    if not 0 < timeout <= MAX_CELL_TIMEOUT:
        raise ToolError(
            f"run_cell: timeout must be more than 0 and at most {MAX_CELL_TIMEOUT:g} seconds"
        )
    opened = await open_notebook(ctx, notebook, for_edit=False)
    index, cell = find_cell(opened.loaded, cell_id)
    if cell.cell_type != "code":
        raise ToolError(
            f"cell {cell.id} ({cell_label(index)}) is a {cell.cell_type} cell; only code runs"
        )
    source = cell_source(cell)
    if is_copilot_cell(source):
        raise ToolError(
            f"cell {cell.id} ({cell_label(index)}) is a %%copilot cell; run_cell does not run one"
        )
    code = ctx.shell.transform_cell(source) if ctx.shell is not None else source
    runs = refuse_if_busy(ctx, "run_cell")
    kept = before_run(ctx, source, f"cell {cell_label(index)}")

    async def finish(run: CodeRun) -> ToolOutput:
        note = after_run(ctx, source, kept)
        count = take_number(ctx.shell, code, source)
        outputs = notebook_outputs(run, ctx.shell, timeout, count=count)
        try:
            await _put_outputs(ctx, opened, cell, source, outputs, kept, count)
        except ToolError as exc:  # the user's edit wins; the run's result still reaches the model
            unplaced = f"its outputs are not in the cell, which changed while it ran: {exc}"
            return _result(opened.path, cell.id, index, run, outputs, opened.note, note, unplaced)
        return _result(opened.path, cell.id, index, run, outputs, opened.note, note)

    if runs.wait_seconds <= 0:  # runs in the background are off: the kernel's thread, blocking
        return await finish(
            await run_code_in(ctx.namespace(), code, timeout=timeout, shell=ctx.shell)
        )
    label = f"cell {cell.id} ({cell_label(index)})"

    def going(run: Run) -> None:
        if opened.view is not None:  # the open cell shows the run's output as it comes
            show_progress(opened.view, cell.id, source, run)

    return await follow(
        ctx, runs, code, label=label, timeout=timeout, finish=finish, cell=cell.id, on_going=going
    )


async def _put_outputs(
    ctx: ToolContext,
    opened: Opened,
    ran: Any,
    source: str,
    outputs: list[dict[str, Any]],
    kept: Kept | None = None,
    count: int | None = None,
) -> None:
    """Put the outputs into the cell, unless the user changed its source while it ran: the
    open notebook checks that itself as it sets them; the file is read again to check. In
    review mode the cell's review says it ran and what its Undo puts back in the kernel (the
    variables kept before the run), and the cell's Undo puts them back."""
    cell_id = ran.id
    turn = review_turn(ctx, opened)
    state = kept.note() if kept is not None else ""
    if turn and kept is not None and kept.values and ctx.live is not None:
        namespace = ctx.namespace()
        ctx.live.review.on_undo(turn, cell_id, lambda: kept.put_back(namespace))
    instance = kernel_state(ctx.shell).instance
    review = review_of(ran, turn, "run", ran=True, kernel=state, instance=instance)
    marks = marked(stamp(ctx, "ran"), review)
    if opened.view is not None:
        await opened.view.request(
            "set_outputs",
            cell_id=cell_id,
            expected=source,
            outputs=outputs,
            execution_count=count,
            metadata=marks,
        )
        return
    async with ctx.notebooks.lock:
        now = await open_notebook(ctx, opened.path, for_edit=False)
        index, cell = find_cell(now.loaded, cell_id)
        if cell_source(cell) != source:
            raise ToolError(conflict_message(now.path, cell_id, index) + " (it ran, though)")
        from nbformat import from_dict  # imported late: it is slow, and only files need it

        cell["outputs"], cell["execution_count"] = from_dict(outputs), count
        cell.setdefault("metadata", {}).update(marks)
        await commit(ctx, now, [])


def _result(
    path: str,
    cell_id: str,
    index: int,
    run: CodeRun,
    outputs: list[dict[str, Any]],
    note: str,
    kept: str = "",
    unplaced: str = "",
) -> ToolOutput:
    shown = [describe_output(output) for output in outputs] or ["(no output)"]
    content, _ = redact_text("\n".join(shown))
    if kept:
        content += f"\nkernel: {kept}"
    if unplaced:
        content += f"\n{unplaced}"
    head = f"ran cell {cell_id} ({cell_label(index)}) of {path} in {run.seconds:.2f} s ({note})"
    failed = bool(run.error) or run.timed_out
    first = run.error.split("\n", 1)[0] if run.error else ("timed out" if run.timed_out else "")
    summary = f"{cell_label(index)} " + shorten(first or ran_for(run.seconds), 90)
    return ToolOutput(
        content=f"{head}:\n{content}",
        is_error=failed,
        summary=summary,
        images=output_images(outputs),
    )
