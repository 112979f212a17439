"""Workspace tools beyond one file: find_files, search_text, move_path and delete_path.

Searches see the project as git does (`.git` and gitignored paths are skipped, see `walk.py`),
start only inside the workspace (the glob is checked and its first folder resolved through the
`Workspace`), and run in a worker thread that Stop ends (`walk.stoppable`). search_text never
shows the contents of a file that may hold secrets, and bounds every regex call
(`engine.py`); ripgrep, when there is one, reads the big files (`ripgrep.py`), with the
same results. Results are capped with a marker that says how to narrow. Moves and deletes go
through the `Workspace`, so the protected paths hold and each change is checkpointed for undo;
a move that would take a secret to a name that is not one is refused.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import SandboxError, ToolError
from ...events import FileChanged
from ...workspace.workspace import Workspace
from ..context import ToolContext
from ..os_errors import os_errors
from ..registry import ToolOutput, ToolSet, bound_tool
from .engine import SKIP_NOTE, TextSearch, narrower_glob
from .ripgrep import RipgrepFailed, ripgrep_for, search_with_ripgrep
from .walk import Glob, GlobError, compile_glob, stoppable, walk_glob

_log = logging.getLogger(__name__)
MAX_FOUND = 500
"""Paths shown by one find_files call."""


def search_tools(workspace: Workspace) -> ToolSet:
    """find_files, search_text, move_path and delete_path bound to one workspace."""
    ctx = ToolContext(workspace=workspace)
    return ToolSet(
        [
            bound_tool(find_files, ctx),
            bound_tool(search_text, ctx),
            bound_tool(move_path, ctx, category="edit", on_request=True),
            bound_tool(delete_path, ctx, category="edit", on_request=True),
        ]
    )


async def find_files(ctx: ToolContext, glob: str) -> ToolOutput:
    """Find files by a glob relative to the workspace root; returns the sorted paths.
    `**` crosses folders (`src/**/*.py`), `*` and `?` do not, `{a,b}` gives choices, and a
    glob without a slash matches file names at any depth (`*.py`). Gitignored files and
    .git are skipped.

    Args:
        glob: E.g. "**/*.py", "src/**/test_*.py", "*.{md,txt}".
    """
    workspace = ctx.need_workspace()
    compiled = _glob("find_files", workspace, glob)

    def work(stop: threading.Event) -> list[str]:
        with _glob_errors("find_files"):
            return sorted(rel for rel, _ in walk_glob(workspace, compiled, stop))

    found = await stoppable(work)
    if not found:
        return ToolOutput(
            content=f"no files match {glob!r} ({SKIP_NOTE}; find_files lists files, "
            "list_directory shows folders)",
            summary=f"{glob} (no files)",
        )
    lines = found[:MAX_FOUND]
    if len(found) > MAX_FOUND:
        lines.append(
            f"… {len(found) - MAX_FOUND:,} more files; narrow the glob "
            f"(e.g. {narrower_glob(found, glob)!r}) to see them"
        )
    header = f"{len(found):,} files match {glob!r}"
    return ToolOutput(content="\n".join([header, *lines]), summary=f"{glob} ({len(found):,} files)")


async def search_text(ctx: ToolContext, regex: str, glob: str | None = None) -> ToolOutput:
    """Search file contents with a Python regex, line by line like `grep -n`: `path:line:
    text` per match. Skips binary and gitignored files, and files that may hold secrets
    (.env, keys: read_file asks for those). `(?i)` ignores case.

    Args:
        regex: A Python `re` pattern, e.g. "def \\w+_total" or "TODO|FIXME".
        glob: Only search files matching this glob, e.g. "**/*.py" or "src/**".
    """
    workspace = ctx.need_workspace()
    compiled = _glob("search_text", workspace, glob) if glob else None
    is_secret = workspace.secrets.for_walk(workspace.root)

    def work(stop: threading.Event) -> ToolOutput:
        search = TextSearch(regex, stop=stop, is_secret=is_secret)
        with _glob_errors("search_text"):
            binary = ripgrep_for(search)
            if binary is not None:
                try:
                    search_with_ripgrep(binary, search, workspace, compiled)
                    return search.output(glob)
                except RipgrepFailed as exc:  # the Python engine gives the same results
                    _log.warning("search_text: %s failed (%s); searching in Python", binary, exc)
                    search = TextSearch(regex, stop=stop, is_secret=is_secret)
            search.run(walk_glob(workspace, compiled, stop))
        return search.output(glob)

    return await stoppable(work)


def move_path(ctx: ToolContext, source: str, destination: str) -> ToolOutput:
    """Move or rename a file or folder in the workspace; missing parent folders are created.

    Args:
        source: The file or folder to move.
        destination: Its new path (it must not exist yet).
    """
    workspace = ctx.need_workspace()
    with os_errors("move_path", source, destination=destination):
        src = workspace.resolve_entry(source, action="move")
        target = workspace.resolve_entry(destination, action="move onto")
        _check_secrets_stay(workspace, src, target)
        dst = workspace.relative(target)
        count = _count(src)
        notes = workspace.move(source, destination)
    shown = workspace.relative(src)
    what = f"folder {shown}/ ({count} files)" if count is not None else shown
    diff = f"rename from {shown}\nrename to {dst}\n"
    return ToolOutput(
        content="\n".join([f"moved {what} to {dst}", *notes]),
        summary=f"{shown} → {dst}",
        changes=(FileChanged(path=dst, diff=diff),),
    )


def delete_path(ctx: ToolContext, path: str, recursive: bool = False) -> ToolOutput:
    """Delete a file, a symlink (not what it points to) or a folder in the workspace.

    Args:
        path: What to delete.
        recursive: Must be true to delete a folder that is not empty, with everything in it.
    """
    workspace = ctx.need_workspace()
    with os_errors("delete_path", path):
        node = workspace.resolve_entry(path, action="delete")
        shown = workspace.relative(node)
        count = _count(node)
        try:
            notes = workspace.delete(path, recursive=recursive)
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY:
                raise
            raise ToolError(
                f"delete_path: {shown}/ is a folder that is not empty ({count or 0:,} files "
                "under it); to delete it and everything in it, call delete_path again with "
                "recursive=true"
            ) from exc
    what = f"folder {shown}/ ({count:,} files)" if count is not None else shown
    return ToolOutput(
        content="\n".join([f"deleted {what}", *notes]),
        summary=f"{shown} (deleted)",
        changes=(FileChanged(path=shown, diff=f"--- a/{shown}\n+++ /dev/null\n"),),
    )


def _glob(name: str, workspace: Workspace, text: str) -> Glob:
    """The compiled glob, its first folder checked by the workspace; ToolError otherwise."""
    try:
        compiled = compile_glob(text)
        if compiled.start:
            workspace.resolve(compiled.start)
    except GlobError as exc:
        raise ToolError(f"{name}: {exc}") from exc
    except SandboxError as exc:
        raise ToolError(f"{name}: glob {text!r} leaves the workspace: {exc}") from exc
    return compiled


@contextmanager
def _glob_errors(name: str) -> Iterator[None]:
    """A glob that fails while the walk matches it (too slow to match) is the model's to fix."""
    try:
        yield
    except GlobError as exc:
        raise ToolError(f"{name}: {exc}") from exc


def _check_secrets_stay(workspace: Workspace, src: Path, dst: Path) -> None:
    """Refuse a move that gives a file that may hold secrets a name that is not a secret one:
    read_file would then show its contents without asking."""
    root, rules = workspace.root, workspace.secrets
    for path in _files_under(src):
        real = Path(os.path.realpath(path))
        why = rules.why(root, path, real)
        moved = dst / path.relative_to(src)
        if why is not None and rules.why(root, moved, moved) is None:
            old, new = workspace.relative(path), workspace.relative(moved)
            raise ToolError(
                f"move_path: refusing to move {old} to {new}: {old} may hold secrets ({why}) and "
                f"{new} would not be treated as a secret, so read_file would show it without "
                "asking; move it yourself if you mean to"
            )


def _files_under(node: Path) -> Iterator[Path]:
    """The node, and for a real folder every file under it (symlinks are not followed)."""
    yield node
    if node.is_dir() and not node.is_symlink():
        for folder, _, files in os.walk(node):
            for name in files:
                yield Path(folder) / name


def _count(node: Path) -> int | None:
    """Files under a real folder (None for a file or a symlink)."""
    if not node.is_dir() or node.is_symlink():
        return None
    return sum(len(files) for _, _, files in os.walk(node))
