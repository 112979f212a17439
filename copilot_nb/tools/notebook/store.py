"""Where the notebook tools read and change cells: the notebook open in the front end, else its file.

When the notebook is open in JupyterLab or Notebook 7 with copilot_nb's front-end extension, it
is *live*: the tools read the document the user sees (unsaved cells included) and change it
through the front end, which marks it modified and saves it the user's way. There is no file
write behind the editor's back, so no "File Changed" dialog and nothing to choose between.
Everywhere else (VS Code, nbclient, a console, a notebook that is not open) the tools work on the
file, as `notebook_file.py` does it, and every result says which of the two it used.

A change is made only from what the model saw: a file's digest must match (the user saved it in
between); an open cell's source must match what the model last read of it (the user typed in it
in between). The front end checks that again as it applies the change, in one step, so an edit
never lands on top of the user's. Each change stamps the cell's metadata with the model and time.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Any

from ...errors import ToolError
from ...models.cassettes.cassette import active_cassette
from ...workspace.notebook_file import (
    LoadedNotebook,
    cell_source,
    changed_message,
    notebook_from_cells,
    read_notebook,
    resolve_notebook,
    write_notebook,
)
from ..context import LiveNotebook, ToolContext
from .numbering import cell_label

STAMP_KEY = "copilot_nb"
"""The cell metadata key that records an agent's change."""
LIVE_DIGEST = "live"
FILE_NOTE = "file on disk"


@dataclass(kw_only=True)
class Opened:
    """A notebook as a tool works on it: its cells (nbformat nodes) and where they came from."""

    loaded: LoadedNotebook
    view: LiveNotebook | None
    note: str
    """What the result says about the mode: `live: …` or `file: …`."""

    @property
    def path(self) -> str:
        return self.loaded.path

    @property
    def cells(self) -> list[Any]:
        return list(self.loaded.node.cells)


async def open_notebook(
    ctx: ToolContext, notebook: str | None, *, for_edit: bool, missing_ok: bool = False
) -> Opened:
    """The notebook a call means, live when a front end has it open; see the module docstring.

    Call with `ctx.notebooks.lock` held when the result is going to be changed."""
    workspace = ctx.need_workspace()
    path = resolve_notebook(workspace, notebook, _current(ctx), must_exist=not missing_ok)
    view = await ctx.live.find(workspace.root / path) if ctx.live is not None else None
    if view is not None:
        return await _open_live(ctx, path, view)
    loaded = await asyncio.to_thread(read_notebook, workspace, path, missing_ok=missing_ok)
    seen = ctx.notebooks.seen
    if for_edit and seen.get(path, loaded.digest) != loaded.digest:
        raise ToolError(changed_message(path))
    seen[path] = loaded.digest
    return Opened(loaded=loaded, view=None, note=_file_note(ctx, for_edit))


def remember(ctx: ToolContext, opened: Opened, cells: list[Any]) -> None:
    """The model has now seen these cells' sources (an open notebook's later edits check them)."""
    if opened.view is not None:
        seen = ctx.notebooks.cells_seen.setdefault(opened.path, {})
        seen.update({cell.id: cell_source(cell) for cell in cells})


def check_seen(ctx: ToolContext, opened: Opened, cell: Any, index: int) -> None:
    """Refuse a change to an open cell whose source changed since the model read it."""
    if opened.view is None:
        return
    before = ctx.notebooks.cells_seen.get(opened.path, {}).get(cell.id)
    if before is not None and before != cell_source(cell):
        raise ToolError(conflict_message(opened.path, cell.id, index))


def conflict_message(path: str, cell_id: str, index: int | None = None) -> str:
    where = f"cell {cell_id}" + (f" ({cell_label(index)})" if index is not None else "")
    return (
        f"{where} of {path} changed in the open notebook since you read it (the user is "
        "editing it); nothing was changed. Call read_cell to see its current source, then "
        "make your change again if it still applies"
    )


def stamp(ctx: ToolContext, change: str) -> dict[str, Any]:
    """The metadata an agent-made or agent-changed cell carries: what changed, when, by which
    model of which provider, and the cassette entry (`name.copilot.jsonl#7`) whose reply asked
    for the change when the kernel records or replays one."""
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    record = {"change": change, "at": now.replace("+00:00", "Z")}
    for key, value in (("model", ctx.model_name()), ("provider", ctx.model_provider())):
        if value:
            record[key] = value
    cassette = active_cassette()
    if cassette is not None and cassette.used:
        record["cassette"] = f"{cassette.path.name}#{cassette.used[-1]}"
    return {STAMP_KEY: record}


async def commit(
    ctx: ToolContext,
    opened: Opened,
    changes: list[dict[str, Any]],
    undo: list[dict[str, Any]] | None = None,
) -> None:
    """Make the changes: in the open notebook (checked there, one step of its own undo), or
    write the file whose nodes the caller already changed (checkpointed, as every write is).

    `undo` takes an open notebook's changes back; the turn keeps it for `%copilot undo`."""
    workspace = ctx.need_workspace()
    if opened.view is None:
        await asyncio.to_thread(write_notebook, workspace, opened.loaded)
        ctx.notebooks.seen[opened.path] = opened.loaded.digest
        return
    await opened.view.request("apply", changes=changes)
    if undo:
        workspace.checkpoints.record_cells(opened.path, undo)
    seen = ctx.notebooks.cells_seen.setdefault(opened.path, {})
    for change in changes:
        if change["kind"] == "delete":
            seen.pop(change["cell_id"], None)
        elif change["kind"] == "insert":
            seen[change["cell"]["id"]] = change["cell"]["source"]
        else:
            seen[change["cell_id"]] = change["source"]


async def _open_live(ctx: ToolContext, path: str, view: LiveNotebook) -> Opened:
    snapshot = await view.request("snapshot")
    node = notebook_from_cells(list(snapshot.get("cells") or []))
    unsaved = ", unsaved changes included" if snapshot.get("dirty") else ""
    note = f"live: open in {view.app}{unsaved}"
    return Opened(
        loaded=LoadedNotebook(path=path, node=node, digest=LIVE_DIGEST), view=view, note=note
    )


def _file_note(ctx: ToolContext, for_edit: bool) -> str:
    """`file: …`, with how to get live editing once per conversation where a front end exists."""
    why = ctx.live.fallback_note() if ctx.live is not None else ""
    if not why:
        return FILE_NOTE
    if for_edit and not ctx.notebooks.hinted:
        ctx.notebooks.hinted = True
        return f"{FILE_NOTE}; {why}"
    return f"{FILE_NOTE}: no open notebook answered"


def _current(ctx: ToolContext) -> Any:
    """The kernel's notebook: the one whose front end sent this request, else the session's."""

    def current() -> str | None:
        if ctx.live is not None:
            found = ctx.live.current_path()
            if found is not None:
                return str(found)
        return ctx.current_notebook()

    return current
