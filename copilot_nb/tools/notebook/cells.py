"""The notebook tools: list, read, edit, replace, insert and delete cells of a notebook.

Cells are addressed by their nbformat `id` (stable across edits), or by `#N`, the 1-based number
list_cells shows (JupyterLab's own numbering, `numbering.py`). Where the cells come from and where a change goes is `store.py`: the
notebook open in a front end when one has it (live: unsaved cells included, changes shown at
once, the user's own undo and save), else the .ipynb file through `workspace/notebook_file.py`
(workspace policy, atomic writes, the changed-on-disk check). Either way an edit made from a view
that is out of date (the user typed in the cell, or saved the file, since the model read it) is
refused rather than applied over the user's work, and each result says which of the two it used.

Reading a notebook whose path may hold secrets (`secret_paths.py`, e.g. under `.ssh/`) is the
approval category `read-secret`; editing one stays an `edit`, so a read-only run still refuses it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Literal

from ...errors import SandboxError, ToolError
from ...events import CellChanged
from ...text import cell_diff, editor_lines, shorten, total_changes
from ...workspace.checkpoints import CELL_NUMBER
from ...workspace.notebook_file import (
    LoadedNotebook,
    as_written,
    cell_source,
    new_cell,
    resolve_notebook,
)
from ...workspace.workspace import Workspace
from ..context import ToolContext
from ..kernel.run_tools import refuse_if_running_cell
from ..redaction.masking import redact_text
from ..redaction.secret_reads import reads_secret
from ..registry import ToolOutput, ToolSet, bound_tool
from ..text_edits import clip_diff, match_problem, occurrences
from ..views.outputs import brief_output, describe_image, describe_output, output_images
from .markdown_loads import refusal, remote_loads
from .numbering import cell_label, cell_position, numbered_index
from .review import deleted, marked, review_of, review_turn, tagged
from .store import Opened, check_seen, commit, open_notebook, remember, stamp

MAX_FIRST_LINE = 80
"""Characters of a cell's first line shown by list_cells."""
MAX_LISTED_IDS = 40
"""Cell ids named in an 'unknown cell' error."""
MAX_OUTPUTS_SHOWN = 20
"""Outputs of one cell shown by read_cell."""


def notebook_tools(workspace: Workspace, *, current_notebook: Callable[[], str | None]) -> ToolSet:
    """The cell tools bound to a workspace; `current_notebook` names the kernel's own notebook."""
    return notebook_toolset(ToolContext(workspace=workspace, current_notebook=current_notebook))


def notebook_toolset(ctx: ToolContext) -> ToolSet:
    """The cell tools bound to a context (its workspace, kernel notebook and notebook views)."""
    workspace = ctx.need_workspace()
    secret_read = reads_secret(workspace, ["notebook"], default=lambda: _kernel_notebook(ctx))
    return ToolSet(
        [
            bound_tool(list_cells, ctx, classify=secret_read),
            bound_tool(read_cell, ctx, classify=secret_read),
            bound_tool(edit_cell, ctx, category="edit"),
            bound_tool(replace_cell, ctx, category="edit"),
            bound_tool(insert_cell, ctx, category="edit"),
            bound_tool(delete_cell, ctx, category="edit", on_request=True),
        ]
    )


async def list_cells(ctx: ToolContext, notebook: str | None = None) -> ToolOutput:
    """List a notebook's cells: number (#1 first, as JupyterLab counts), id, type, execution
    count, first line and outputs; an open notebook as it is now, unsaved edits included.

    Args:
        notebook: Path of a .ipynb file in the workspace; defaults to the notebook this
            kernel runs.
    """
    opened = await open_notebook(ctx, notebook, for_edit=False)
    cells = opened.cells
    remember(ctx, opened, cells)
    counts = {kind: sum(c.cell_type == kind for c in cells) for kind in ("code", "markdown")}
    kinds = ", ".join(f"{k} {n}" for k, n in counts.items() if n)
    header = f"{opened.path}: {len(cells)} cells" + (f" ({kinds})" if kinds else "")
    lines = [header, *(_cell_line(i, c) for i, c in enumerate(cells))]
    if not cells:
        lines.append("(no cells; add one with insert_cell)")
    lines.append(f"({opened.note})")
    return ToolOutput(content="\n".join(lines), summary=header + (" · live" if opened.view else ""))


async def read_cell(ctx: ToolContext, cell_id: str, notebook: str | None = None) -> ToolOutput:
    """Read one cell: its source with line numbers, and its outputs summarised.

    Args:
        cell_id: Its id from list_cells, or "#N" (numbered from 1).
        notebook: A .ipynb path; defaults to this kernel's notebook.
    """
    opened = await open_notebook(ctx, notebook, for_edit=False)
    index, cell = find_cell(opened.loaded, cell_id)
    remember(ctx, opened, [cell])
    lines = editor_lines(cell_source(cell))
    facts = [cell.cell_type]
    if cell.cell_type == "code":
        count = cell.get("execution_count")
        facts.append("not run" if count is None else f"execution count {count}")
        if cell.get("running"):
            facts.append("running now")
    facts.append(f"{len(lines)} lines")
    tags = cell.get("metadata", {}).get("tags")
    if tags:
        facts.append("tags: " + ", ".join(map(str, tags)))
    where = cell_position(index, len(opened.loaded.node.cells))
    out = [f"{opened.path} {cell_label(index)} id={cell.id} ({where}; {', '.join(facts)})"]
    out += [f"{n:6d}\t{line}" for n, line in enumerate(lines, 1)] or ["(empty)"]
    out += _attachments(cell)
    outputs = cell.get("outputs", [])
    if outputs:
        out.append(f"outputs ({len(outputs)}):")
        # outputs may show a key or the proxy's token (`%copilot serve`): masked, as run_cell does
        out += [redact_text(describe_output(o))[0] for o in outputs[:MAX_OUTPUTS_SHOWN]]
        if len(outputs) > MAX_OUTPUTS_SHOWN:
            out.append(f"… {len(outputs) - MAX_OUTPUTS_SHOWN} more outputs not shown")
    elif cell.cell_type == "code":
        out.append("outputs: none")
    out.append(f"({opened.note})")
    return ToolOutput(
        content="\n".join(out),
        summary=f"{opened.path} {cell_label(index)} ({facts[0]})",
        images=output_images(outputs[:MAX_OUTPUTS_SHOWN]),
    )


async def edit_cell(
    ctx: ToolContext, cell_id: str, old_str: str, new_str: str, notebook: str | None = None
) -> ToolOutput:
    """Replace one exact, unique piece of text in a cell's source with new text. Refused when
    the cell changed since you read it (the user edited it): read it again.

    A code cell's outputs are cleared, since they no longer match its source.

    Args:
        cell_id: Its id from list_cells, or "#N" (numbered from 1).
        old_str: The exact text to replace, including whitespace; it must occur exactly
            once in the cell, so include enough surrounding lines.
        new_str: The text to put in its place (empty to delete old_str).
        notebook: A .ipynb path; defaults to this kernel's notebook.
    """
    if old_str == "":
        raise ToolError(
            "edit_cell: old_str is empty; copy the exact text to replace from read_cell "
            "(to rewrite the whole cell, use replace_cell)"
        )
    if old_str == new_str:
        raise ToolError("edit_cell: old_str and new_str are the same; nothing would change")

    def edited(where: str, before: str) -> str:
        starts = occurrences(before, old_str)
        if len(starts) != 1:
            raise ToolError(
                match_problem(
                    "edit_cell",
                    "read_cell",
                    where,
                    before,
                    old_str,
                    starts,
                    current="its current source",
                )
            )
        return before[: starts[0]] + new_str + before[starts[0] + len(old_str) :]

    return await _change_source(ctx, "edit_cell", notebook, cell_id, "edited", edited)


async def replace_cell(
    ctx: ToolContext, cell_id: str, source: str, notebook: str | None = None
) -> ToolOutput:
    """Replace a cell's whole source (its type stays; a code cell's outputs are cleared).

    Args:
        cell_id: Its id from list_cells, or "#N" (numbered from 1).
        source: The complete new source of the cell.
        notebook: A .ipynb path; defaults to this kernel's notebook.
    """
    return await _change_source(
        ctx, "replace_cell", notebook, cell_id, "replaced", lambda _where, _old: source
    )


async def insert_cell(
    ctx: ToolContext,
    after_cell_id: str | None,
    cell_type: Literal["code", "markdown"],
    source: str,
    notebook: str | None = None,
) -> ToolOutput:
    """Insert a new code or markdown cell (not run: it has no outputs until the user runs it).

    Args:
        after_cell_id: The cell to insert after (id or "#N"); null: at the top.
        cell_type: The new cell's type.
        source: The new cell's source.
        notebook: A .ipynb path (made if missing and after_cell_id is null); defaults to
            this kernel's notebook.
    """
    async with ctx.notebooks.lock:
        opened = await open_notebook(ctx, notebook, for_edit=True, missing_ok=after_cell_id is None)
        _no_remote_loads("insert_cell", cell_type, None, source)
        cells = opened.loaded.node.cells
        after = None if after_cell_id is None else find_cell(opened.loaded, after_cell_id)
        position = 0 if after is None else after[0] + 1
        cell = new_cell(cell_type, source, {c.id for c in cells})
        turn = review_turn(ctx, opened)
        cell.metadata.update(marked(stamp(ctx, "inserted"), review_of(cell, turn, "insert")))
        cells.insert(position, cell)
        change = {"kind": "insert", "after_id": after and after[1].id, "cell": dict(cell)}
        note = "" if opened.loaded.digest else f" (created {opened.path})"
        undo = {"kind": "delete", "cell_id": cell.id, "expected": source, CELL_NUMBER: position + 1}
        await commit(ctx, opened, [change], [tagged(undo, turn)])
    return _changed(opened, cell, position, "inserted", None, source, note)


async def delete_cell(ctx: ToolContext, cell_id: str, notebook: str | None = None) -> ToolOutput:
    """Delete a cell from a notebook; the user can take it back with the notebook's undo.

    Args:
        cell_id: Its id from list_cells, or "#N" (numbered from 1).
        notebook: A .ipynb path; defaults to this kernel's notebook.
    """
    async with ctx.notebooks.lock:
        opened = await open_notebook(ctx, notebook, for_edit=True)
        index, cell = find_cell(opened.loaded, cell_id)
        check_seen(ctx, opened, cell, index)
        refuse_if_running_cell(ctx, cell.id, "delete_cell")
        before = cell_source(cell)
        previous = opened.loaded.node.cells[index - 1].id if index else None
        undo = {"kind": "insert", "after_id": previous, "cell": copy.deepcopy(dict(cell))}
        undo[CELL_NUMBER] = index + 1
        del opened.loaded.node.cells[index]
        change: dict[str, Any] = {"kind": "delete", "cell_id": cell.id, "expected": before}
        turn = review_turn(ctx, opened)
        review = deleted(cell, turn, previous) if opened.view is not None else None
        if review is not None:
            change["review"] = review
        await commit(ctx, opened, [change], [tagged(undo, turn)])
    diff = cell_diff(opened.path, cell.id, before, None)
    left = len(opened.loaded.node.cells)
    return ToolOutput(
        content=f"deleted cell {cell.id} (was {cell_label(index)}) from {opened.path}; "
        f"{left} cells left ({opened.note}):\n{clip_diff(diff)}",
        summary=f"{opened.path} {cell_label(index)} deleted",
        changes=(CellChanged(notebook=opened.path, cell_id=cell.id, change="deleted", diff=diff),),
    )


async def _change_source(
    ctx: ToolContext,
    tool: str,
    notebook: str | None,
    cell_id: str,
    change: str,
    new_source: Callable[[str, str], str],
) -> ToolOutput:
    """Set one cell's source to `new_source(where, before)`, clearing a code cell's outputs."""
    async with ctx.notebooks.lock:
        opened = await open_notebook(ctx, notebook, for_edit=True)
        index, cell = find_cell(opened.loaded, cell_id)
        check_seen(ctx, opened, cell, index)
        refuse_if_running_cell(ctx, cell.id, tool)
        before = cell_source(cell)
        after = new_source(f"cell {cell.id} ({cell_label(index)}) of {opened.path}", before)
        _no_remote_loads(tool, cell.cell_type, before, after)
        if after == before:
            return ToolOutput(
                content=f"cell {cell.id} ({cell_label(index)}) already has this source; nothing changed",
                summary=f"{opened.path} {cell_label(index)} (unchanged)",
            )
        turn = review_turn(ctx, opened)
        marks = marked(stamp(ctx, change), review_of(cell, turn, "edit"))
        undo = {
            "kind": "set_source",
            "cell_id": cell.id,
            "expected": after,
            "source": before,
            "cell": copy.deepcopy(dict(cell)),
            CELL_NUMBER: index + 1,
        }
        cell["source"] = after
        cell.setdefault("metadata", {}).update(marks)
        as_written(cell)
        edit = {
            "kind": "set_source",
            "cell_id": cell.id,
            "expected": before,
            "source": after,
            "metadata": marks,
            "clear_outputs": True,
        }
        await commit(ctx, opened, [edit], [tagged(undo, turn)])
    return _changed(opened, cell, index, change, before, after)


def _no_remote_loads(tool: str, cell_type: str, before: str | None, after: str) -> None:
    """Refuse Markdown that would load something from elsewhere which the cell did not before."""
    if cell_type != "markdown":
        return
    added = [url for url in remote_loads(after) if url not in remote_loads(before or "")]
    if added:
        raise ToolError(refusal(tool, added))


def _changed(
    opened: Opened,
    cell: Any,
    index: int,
    change: str,
    before: str | None,
    after: str,
    note: str = "",
) -> ToolOutput:
    """What a change tells the model: the diff (cut), and where it was made."""
    diff = cell_diff(opened.path, cell["id"], before, after)
    added, removed = total_changes(diff)
    return ToolOutput(
        content=f"{change} cell {cell['id']} ({cell_label(index)}) in {opened.path}{note} "
        f"({opened.note}):\n{clip_diff(diff)}",
        summary=f"{opened.path} {cell_label(index)} {change} +{added} −{removed}",
        changes=(CellChanged(notebook=opened.path, cell_id=cell["id"], change=change, diff=diff),),
    )


def _kernel_notebook(ctx: ToolContext) -> str | None:
    """The notebook a call without `notebook=` reads, for the classifier (None if unknown)."""
    try:
        return resolve_notebook(ctx.need_workspace(), None, ctx.current_notebook)
    except (ToolError, SandboxError):
        return None


def find_cell(loaded: LoadedNotebook, cell_id: str) -> tuple[int, Any]:
    """(index, cell) for an id or `#N` (from 1); otherwise a ToolError naming the ids that exist."""
    cells = loaded.node.cells
    wanted = cell_id.strip()
    index = numbered_index(wanted)
    if index is not None:
        if 0 <= index < len(cells):
            return index, cells[index]
        raise ToolError(
            f"there is no cell {wanted} in {loaded.path}: it has {len(cells)} cells, "
            f"numbered from #1 to #{len(cells)}; call list_cells to see them"
            if cells
            else f"{loaded.path} has no cells; add one with insert_cell(after_cell_id=null, ...)"
        )
    for index, cell in enumerate(cells):
        if cell.id == wanted:
            return index, cell
    listed = ", ".join(f"{cell_label(i)} {c.id}" for i, c in enumerate(cells[:MAX_LISTED_IDS]))
    more = f", … ({len(cells)} in all)" if len(cells) > MAX_LISTED_IDS else ""
    known = f"its cells are: {listed}{more}" if cells else "it has no cells"
    hint = "call list_cells to see them" if cells else "add one with insert_cell"
    raise ToolError(f"no cell with id {cell_id!r} in {loaded.path}; {known}; {hint}")


def _cell_line(index: int, cell: Any) -> str:
    """`#4 code [5] id=ab12cd34 | df.plot()  (+2 lines) → image/png 640x480`."""
    source = cell_source(cell)
    lines = editor_lines(source)
    first = shorten(next((line.strip() for line in lines if line.strip()), ""), MAX_FIRST_LINE)
    more = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    kind = cell.cell_type
    if kind == "code":
        count = "*" if cell.get("running") else cell.get("execution_count")
        kind += f" [{count if count is not None else ' '}]"
    outputs = [brief_output(o) for o in cell.get("outputs", [])]
    shown = f"  → {'; '.join(outputs)}" if outputs else ""
    return f"{cell_label(index)} {kind} id={cell.id} | {first or '(empty)'}{more}{shown}"


def _attachments(cell: Any) -> list[str]:
    """Markdown attachments by name and size; their base64 data is never shown."""
    return [
        f"[attachment {name}: {describe_image(mime, payload).strip('[]')}]"
        for name, bundle in (cell.get("attachments") or {}).items()
        for mime, payload in bundle.items()
    ]
