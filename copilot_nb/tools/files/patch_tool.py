"""`apply_patch`: the codex models' own editing tool, offered to that family only (`agent/prompt/families.py`).

The patch is parsed (`patch.py`), then every file it names is checked and its new text computed
before anything is written: the workspace's path policy, no notebooks, no secret paths, hunks that
fit. Only then is each file written through the `Workspace` (atomic, checkpointed, so `%copilot
undo` takes the whole patch back with its turn). A write that still fails half-way (a full disk)
puts back the files already written, so a patch applies wholly or not at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SandboxError, ToolError
from ...events import FileChanged
from ...text import total_changes, unified_diff
from ...workspace.workspace import Workspace
from ..context import ToolContext
from ..os_errors import os_errors
from ..registry import ToolOutput, ToolSet, bound_tool
from ..text_edits import editor_lines
from .patch import (
    AddFile,
    DeleteFile,
    FileOp,
    PatchError,
    UpdateFile,
    parse_patch,
)
from .patch_apply import apply_hunks
from .textfile import editable_text
from .tools import BOM, NOTEBOOK_WHY

TOOL = "apply_patch"


@dataclass(frozen=True, kw_only=True)
class Planned:
    """One file of a checked patch: what it holds now and what it will hold."""

    path: str
    """As the patch names it (the workspace resolves it again when writing)."""
    shown: str
    before: bytes | None
    """None: the file does not exist yet."""
    after: str | None
    """The new text (without a byte-order mark); None: the file is deleted."""
    data: bytes = b""
    """What is written: `after` encoded, its byte-order mark kept."""
    move_to: str = ""
    moved_shown: str = ""


def patch_tools(workspace: Workspace) -> ToolSet:
    """`apply_patch` bound to one workspace (an `edit`: each call asks as edits do)."""
    return ToolSet([bound_tool(apply_patch, ToolContext(workspace=workspace), category="edit")])


def apply_patch(ctx: ToolContext, input: str) -> ToolOutput:
    """Edit files with a patch: '*** Begin Patch', then per file '*** Update File: PATH' with
    '@@' hunks (' ' context, '-' removed, '+' added lines; about 3 context lines each),
    '*** Add File: PATH' ('+' lines) or '*** Delete File: PATH', then '*** End Patch'. All
    files change or none. For notebooks (.ipynb) use the cell tools.

    Args:
        input: The whole patch, from '*** Begin Patch' to '*** End Patch'.
    """
    workspace = ctx.need_workspace()
    try:
        ops = parse_patch(input)
        plans = [_plan(workspace, op) for op in ops]
    except PatchError as exc:
        raise ToolError(f"{TOOL}: {exc}; nothing was changed") from None
    _check_distinct(workspace, plans)
    notes = _write_all(workspace, plans)
    return _report(workspace, plans, notes)


def _plan(workspace: Workspace, op: FileOp) -> Planned:
    """Check one operation and compute the file's new text; nothing is written here."""
    path = op.path
    create = f"to create it use '*** Add File: {path}'" if isinstance(op, UpdateFile) else ""
    with os_errors(TOOL, path, hint=create):
        target = _target(workspace, path)
        shown = workspace.relative(target)
        if isinstance(op, AddFile):
            if target.exists():
                raise ToolError(
                    f"{TOOL}: {shown} already exists (line {op.line}); change it with "
                    f"'*** Update File: {shown}' and @@ hunks; nothing was changed"
                )
            data = op.content.encode("utf-8")
            return Planned(path=path, shown=shown, before=None, after=op.content, data=data)
        before = workspace.read_bytes(path)
        if isinstance(op, DeleteFile):
            _sandboxed(workspace.resolve_entry, path, action="delete")
            return Planned(path=path, shown=shown, before=before, after=None)
        text = editable_text(
            before, shown, refusal=f"{TOOL}: it cannot be patched; nothing was changed"
        )
        bom, text = text[: text.startswith(BOM)], text.removeprefix(BOM)
        after = apply_hunks(text, op, shown)
        data = (bom + after).encode("utf-8")
        if not op.move_to:
            return Planned(path=path, shown=shown, before=before, after=after, data=data)
        destination = _target(workspace, op.move_to)
        moved = workspace.relative(destination)
        _sandboxed(workspace.resolve_entry, op.move_to, action="move onto")
        if destination.exists():
            raise ToolError(
                f"{TOOL}: cannot move {shown} to {moved} (line {op.line}): {moved} already "
                "exists; choose another path; nothing was changed"
            )
        return Planned(
            path=path,
            shown=shown,
            before=before,
            after=after,
            data=data,
            move_to=op.move_to,
            moved_shown=moved,
        )


def _target(workspace: Workspace, path: str) -> Path:
    """The real path a patch may write: in the workspace, allowed, not a notebook or a secret."""
    target = _sandboxed(workspace.resolve, path, write=True)
    shown = workspace.relative(target)
    if path.lower().endswith(".ipynb") or target.suffix.lower() == ".ipynb":
        raise ToolError(f"{TOOL}: refusing to patch {shown}: {NOTEBOOK_WHY}; nothing was changed")
    why = workspace.secret(path)
    if why is not None:
        raise ToolError(
            f"{TOOL}: refusing to patch {shown}: {why}, so it may hold secrets; apply_patch "
            "does not change such files (leave it to the user); nothing was changed"
        )
    return target


def _sandboxed(check: Callable[..., Path], path: str, **options: Any) -> Path:
    """A workspace path check whose refusal is this tool's error."""
    try:
        return check(path, **options)
    except SandboxError as exc:
        raise ToolError(f"{TOOL}: {exc}; nothing was changed") from None


def _check_distinct(workspace: Workspace, plans: list[Planned]) -> None:
    """Two names for one file (a symlink, a different spelling) would be patched twice."""
    seen: dict[Path, str] = {}
    for plan in plans:
        for path in filter(None, (plan.path, plan.move_to)):
            real = workspace.resolve(path)
            if real in seen:
                raise ToolError(
                    f"{TOOL}: {path} and {seen[real]} are the same file; name it once in the "
                    "patch, with all of its hunks; nothing was changed"
                )
            seen[real] = path


def _write_all(workspace: Workspace, plans: list[Planned]) -> list[str]:
    """Write every planned file; on a failure, put back those already written and say so."""
    notes: list[str] = []
    done: list[Planned] = []
    try:
        for plan in plans:
            done.append(plan)
            if plan.after is None:
                notes += workspace.delete(plan.path)
                continue
            notes += workspace.write_bytes(plan.path, plan.data)
            if plan.move_to:
                notes += workspace.move(plan.path, plan.move_to)
    except (OSError, SandboxError) as exc:
        for undone in reversed(done):
            with contextlib.suppress(OSError, SandboxError):
                _put_back(workspace, undone)
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ToolError(
            f"{TOOL}: writing {done[-1].shown} failed ({reason}); the files written before it "
            "were put back, so nothing was changed"
        ) from exc
    return notes


def _put_back(workspace: Workspace, plan: Planned) -> None:
    """Undo one file of a patch that failed half-way, from whatever state it was left in."""
    if plan.move_to and workspace.exists(plan.move_to) and not workspace.exists(plan.path):
        workspace.move(plan.move_to, plan.path)
    if plan.before is None:
        if workspace.exists(plan.path):
            workspace.delete(plan.path)
    elif not workspace.exists(plan.path) or workspace.read_bytes(plan.path) != plan.before:
        workspace.write_bytes(plan.path, plan.before)


def _report(workspace: Workspace, plans: list[Planned], notes: list[str]) -> ToolOutput:
    """What changed, in the form the codex models know (`M path`, `A path`, `D path`)."""
    lines = ["Success. Updated the following files:"]
    changes: list[FileChanged] = []
    added = removed = 0
    for plan in plans:
        before = None if plan.before is None else _text(plan.before)
        if plan.after is None:
            lines.append(f"D {plan.shown}")
            diff = f"--- a/{plan.shown}\n+++ /dev/null\n"
            removed += len(editor_lines(before or ""))
            changes.append(FileChanged(path=plan.shown, diff=diff))
            continue
        name = plan.moved_shown or plan.shown
        diff = unified_diff(before, plan.after, name)
        plus, minus = total_changes(diff)
        added, removed = added + plus, removed + minus
        if plan.moved_shown:
            lines.append(f"M {plan.shown} -> {plan.moved_shown}")
            diff = f"rename from {plan.shown}\nrename to {plan.moved_shown}\n{diff}"
        else:
            lines.append(f"{'A' if before is None else 'M'} {name}")
        changes.append(FileChanged(path=name, diff=diff))
    names = [change.path for change in changes]
    what = names[0] if len(names) == 1 else f"{len(names)} files"
    return ToolOutput(
        content="\n".join([*lines, *notes]),
        summary=f"{what} +{added} −{removed}",
        changes=tuple(changes),
    )


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").removeprefix(BOM)
