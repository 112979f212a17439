"""What the model should know before it asks: a short block about the notebook and the project,
built fresh for each turn and sent with its request.

The current notebook's outline (cell ids, types, first lines, which cells failed), the user's
variables (names, types, shapes: never values), the kernel's last error, the workspace's top
level and, in a git repository, the branch and the changed files. Each part has its share of
`budget` characters and says how much it left out; the block is added to the request, never to
the history, so compaction cannot drop it and an old block never lingers.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

from ..errors import CopilotError
from ..kernel_bridge import hidden_names
from ..messages import Message, UserMessage
from ..text import shorten
from ..workspace.notebook_file import resolve_notebook
from .context import ToolContext
from .kernel.run_tools import runs_note
from .kernel.runs import runs_of
from .kernel.variables import size_of, type_name, user_variables
from .notebook.numbering import cell_label
from .notebook.rebuild_cells import restart_note
from .notebook.store import open_notebook

BUDGET = 3000
"""Characters of the whole block (about 750 tokens)."""
SHARES = {
    "notebook": 0.35,
    "review": 0.1,
    "variables": 0.25,
    "error": 0.1,
    "files": 0.1,
    "git": 0.1,
}
RESTART_SHARE = 0.15
"""Of the budget, on top of the shares, for what a restart lost (said only after one)."""
RUNS_SHARE = 0.3
"""Of the budget, on top of the shares, for runs that ended unread (said only when some did)."""
GIT_TIMEOUT = 1.0
LIVE_WAIT = 1.0
OWN_RECORDS = (".copilot.jsonl", ".copilot-chat.jsonl")
"""copilot_nb's own records beside a notebook (its cassette, its saved conversation): the
agent's bookkeeping, not the user's project, so the block neither lists them nor counts them as
changes (the model would otherwise be told every turn that the conversation file changed)."""
"""Seconds the block waits for an open notebook's cells; past it the block leaves it out."""


async def context_block(ctx: ToolContext, *, budget: int = BUDGET) -> str:
    """The block, or '' when there is nothing to say."""
    found = await _cells(ctx)
    parts = [
        _restart(ctx, found, int(budget * RESTART_SHARE)),
        runs_note(runs_of(ctx.shell), int(budget * RUNS_SHARE)),
        _notebook(found, int(budget * SHARES["notebook"])),
        _review(ctx, int(budget * SHARES["review"])),
        _variables(ctx, int(budget * SHARES["variables"])),
        _last_error(ctx, int(budget * SHARES["error"])),
        _files(ctx, int(budget * SHARES["files"])),
        await asyncio.to_thread(_git, ctx, int(budget * SHARES["git"])),
    ]
    shown = [part for part in parts if part]
    if not shown:
        return ""
    return "<context>\n" + "\n".join(shown) + "\n</context>"


def with_request_block(messages: list[Message], block: str) -> list[Message]:
    """The messages with the block put before the latest user request (a copy; `messages` is
    the history, which keeps the request as it was asked)."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=None)
    if not block or last is None:
        return messages
    asked = messages[last]
    assert isinstance(asked, UserMessage)
    sent = replace(asked, content=f"{block}\n\n{asked.content}")  # its images kept
    return [*messages[:last], sent, *messages[last + 1 :]]


async def _cells(ctx: ToolContext) -> tuple[str, list[Any], str] | None:
    """(path, cells, where) of the notebook worked on: from its open view when a front end has
    it, else from the file, read as plain JSON (an outline needs no validation, and it is 4x
    faster); None when there is none or it cannot be read."""
    if ctx.current_notebook() is None or ctx.workspace is None:
        return None
    try:
        path = resolve_notebook(ctx.workspace, None, ctx.current_notebook, must_exist=True)
        view = await ctx.live.find(ctx.workspace.root / path) if ctx.live is not None else None
        if view is not None:  # a silent page must not hold up the turn: it says so itself
            opened = await asyncio.wait_for(open_notebook(ctx, None, for_edit=False), LIVE_WAIT)
            cells, where = [dict(cell) for cell in opened.cells], "live"
        else:
            data = await asyncio.to_thread(ctx.workspace.read_bytes, path)
            cells, where = list(json.loads(data).get("cells") or []), "file"
    except (CopilotError, OSError, ValueError, AttributeError, TimeoutError):
        return None
    return path, cells, where


def _notebook(found: tuple[str, list[Any], str] | None, share: int) -> str:
    """The outline of the notebook worked on: each cell's number, id, first line, failure."""
    if found is None:
        return ""
    path, cells, where = found
    head = f"Notebook {path} ({len(cells)} cells, {where}):"
    lines = [_cell(index, cell) for index, cell in enumerate(cells) if isinstance(cell, dict)]
    return _within(head, lines, share, "more cells; list_cells shows all")


def _restart(ctx: ToolContext, found: tuple[str, list[Any], str] | None, share: int) -> str:
    """After a restart: the names the conversation used that the fresh kernel lacks, each with
    the cells that make it (`notebook/rebuild_cells.py`)."""
    head, items = restart_note(ctx, found[1] if found is not None else [])
    return _within(head, items, max(share, len(head) + 80), "more lost names") if head else ""


def _review(ctx: ToolContext, share: int) -> str:
    """What the user did with the agent's changes in review since the model was last told:
    kept, undone (not to be redone unasked), and undos that were refused, with why."""
    if ctx.live is None:
        return ""
    outcomes = ctx.live.review.unreported()
    if not outcomes:
        return ""
    words = {"undone": "undone", "refused": "undo refused", "kept": "kept"}  # what fits first
    ordered = sorted(outcomes, key=lambda o: list(words).index(o.outcome))
    items = [f"{words[o.outcome]}: {o.describe()}" for o in ordered]
    head = "The user reviewed your earlier changes (do not redo an undone change unless asked):"
    return _within(head, items, max(share, len(head) + 80), "more outcomes")


def _cell(index: int, cell: Any) -> str:
    raw = cell.get("source", "")
    source = "".join(raw) if isinstance(raw, list) else str(raw)
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    outputs = cell.get("outputs", []) or []
    error = next((o for o in outputs if o.get("output_type") == "error"), None)
    mark = ""
    if error is not None:
        mark = " FAILED: " + shorten(f"{error.get('ename', '')}: {error.get('evalue', '')}", 80)
    kind, cell_id = cell.get("cell_type", "?"), cell.get("id", "?")
    return f"{cell_label(index)} {kind} id={cell_id} | {shorten(first, 60)}{mark}"


def _variables(ctx: ToolContext, share: int) -> str:
    namespace = ctx.namespace()
    hidden = hidden_names(getattr(ctx, "shell", None))
    found = user_variables(namespace, hidden)
    if not found:
        return ""
    items = []
    for name, value in found:
        size = size_of(value)
        items.append(f"{name}: {type_name(value)}" + (f" {size}" if size else ""))
    return _within("Variables:", items, share, "more; list_variables shows all", joined=True)


def _last_error(ctx: ToolContext, share: int) -> str:
    if ctx.shell is None:
        return ""
    error = getattr(sys, "last_value", None)
    if error is None:
        return ""
    return shorten(f"Last error in the kernel: {type(error).__name__}: {error}", share)


def _files(ctx: ToolContext, share: int) -> str:
    workspace = ctx.workspace
    if workspace is None:
        return ""
    try:
        entries = sorted(os.scandir(workspace.root), key=lambda e: e.name.lower())
    except OSError:
        return ""
    names = [
        entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
        for entry in entries
        if not entry.name.startswith(".") and not entry.name.endswith(OWN_RECORDS)
    ]
    return _within(f"Workspace {workspace.root}:", names, share, "more", joined=True)


def _git(ctx: ToolContext, share: int) -> str:
    workspace = ctx.workspace
    if workspace is None or not (workspace.root / ".git").exists():
        return ""
    try:
        shown = subprocess.run(
            ["git", "status", "--porcelain=v1", "--branch", "--untracked-files=normal"],
            cwd=workspace.root,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return ""
    branch = shown[0][3:].split("...")[0] if shown and shown[0].startswith("## ") else "?"
    changed = [line[3:] for line in shown[1:] if not line.rstrip('"').endswith(OWN_RECORDS)]
    if not changed:
        return f"Git: branch {branch}, no changes"
    return _within(f"Git: branch {branch}; changed:", changed, share, "more", joined=True)


def _within(head: str, items: list[str], share: int, what: str, *, joined: bool = False) -> str:
    """`head` and as many items as fit in `share` characters, then how many were left out."""
    kept: list[str] = []
    used = len(head)
    for item in items:
        if used + len(item) + 2 > share:
            break
        kept.append(item)
        used += len(item) + 2
    left = len(items) - len(kept)
    tail = f"(+{left} {what})" if left else ""
    if joined:
        return " ".join(part for part in (head, ", ".join(kept), tail) if part)
    return "\n".join([head, *kept, *([tail] if tail else [])])
