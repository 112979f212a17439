"""The four file tools: read_file, write_file, edit_file and list_directory.

Every file access goes through the context's `Workspace`, so the path policy and atomic writes
hold for all of them. Failures are raised as ToolError with a message that says what to do next;
the ToolSet turns them into error results for the model.

A read of a secret path (`.env`, a key, `.git/config`; see `secret_paths.py`) is the approval
category `read-secret`, so the user is asked first. An edit of one stays an `edit` (a read-only
run must still refuse it), and its result shows no diff: only the user sees that.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import ToolError
from ...events import FileChanged
from ...text import first_line, human_bytes, total_changes, unified_diff
from ...workspace.workspace import DirEntry, Workspace
from ..context import ToolContext
from ..os_errors import os_errors
from ..redaction.secret_reads import reads_secret
from ..registry import ToolOutput, ToolSet, bound_tool
from ..text_edits import clip_diff, editor_lines, match_problem, occurrences
from .textfile import BinaryFile, Window, editable_text, read_window

BOM = "\ufeff"
MAX_READ_LINES = 2000
"""Lines shown by one read_file call; the rest is a start_line away."""
MAX_READ_CHARS = 100_000
"""Characters shown by one read_file call, however short the lines."""
MAX_LINE_CHARS = 2000
"""Characters shown of one line (minified files have megabyte-long lines)."""
MAX_LIST_ENTRIES = 1000
"""Entries shown by one list_directory call."""
NOTEBOOK_WHY = (
    "a notebook is JSON that Jupyter may have open, and a text edit can break it or be "
    "overwritten; use the notebook tools (edit_cell, insert_cell, …) to change its cells"
)
SECRET_DIFF = "(the diff is not shown: the file may hold secrets; read_file asks the user first)"
NOTEBOOK_READ_NOTE = "raw notebook JSON; to change cells use the notebook tools, not edit_file"


def file_tools(workspace: Workspace) -> ToolSet:
    """The file tools bound to one workspace, ready to hand to an agent."""
    ctx = ToolContext(workspace=workspace)
    return ToolSet(
        [
            bound_tool(read_file, ctx, classify=reads_secret(workspace, ["path"])),
            bound_tool(write_file, ctx, category="edit"),
            bound_tool(edit_file, ctx, category="edit"),
            bound_tool(list_directory, ctx, on_request=True),
        ]
    )


def read_file(
    ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None
) -> ToolOutput:
    """Read a text file in the workspace, with line numbers (like `cat -n`), up to 2000 lines
    at a time. For a notebook (.ipynb) use list_cells and read_cell instead. A secret file
    (.env, keys) asks the user first.

    Long files are shown up to 2000 lines at a time; pass start_line to read further.

    Args:
        path: File path relative to the workspace root.
        start_line: First line to show (1-based); defaults to the start of the file.
        end_line: Last line to show (inclusive); defaults to as much as fits.
    """
    workspace = ctx.need_workspace()
    first = 1 if start_line is None else start_line
    if first < 1 or (end_line is not None and end_line < first):
        raise ToolError(
            f"read_file: start_line={start_line}, end_line={end_line} is not a valid range; "
            "lines are numbered from 1 and end_line must not be before start_line"
        )
    last = first + MAX_READ_LINES - 1
    last = last if end_line is None else min(end_line, last)
    with os_errors("read_file", path):
        real = workspace.resolve(path)
        shown = workspace.relative(real)
        try:
            window = read_window(real, first, last, max_chars=MAX_LINE_CHARS)
        except BinaryFile as exc:
            raise ToolError(
                f"read_file: {shown} is a binary file ({exc.size:,} bytes), not text; "
                "it cannot be shown"
            ) from exc
    notes = [] if window.valid_utf8 else ["not valid UTF-8; undecodable bytes are shown as �"]
    if _is_notebook(real):
        notes.append(NOTEBOOK_READ_NOTE)
    return _numbered(shown, window, end_line, "; ".join(notes))


def write_file(ctx: ToolContext, path: str, content: str) -> ToolOutput:
    """Create a file, or replace a file's whole content, in the workspace. For a small change
    use edit_file; for a notebook, the cell tools. Refused for files that run code or hold
    settings (.git/hooks, .env, .vscode/).

    Args:
        path: File path relative to the workspace root; missing directories are created.
        content: The complete new content of the file.
    """
    workspace = ctx.need_workspace()
    with os_errors("write_file", path):
        target = workspace.resolve(path, write=True)
        shown = workspace.relative(target)
        if _is_notebook(target) or _is_notebook(path):
            _check_new_notebook(target, shown, content)
        old = workspace.read_bytes(path) if target.is_file() else None
        count = len(editor_lines(content))
        if old is not None and old == content.encode("utf-8"):
            return ToolOutput(
                content=f"{shown} already has this content ({count} lines); nothing changed",
                summary=f"{shown} (unchanged)",
            )
        notes = workspace.write_text(path, content)
    before = None if old is None else old.decode("utf-8", errors="replace")
    diff = unified_diff(before, content, shown)
    if before is None:
        message, summary = f"created {shown} ({count} lines)", f"{shown} ({count} lines)"
    else:
        added, removed = total_changes(diff)
        message = f"overwrote {shown} ({count} lines, was {len(editor_lines(before))})"
        summary = f"{shown} +{added} −{removed}"
    return ToolOutput(
        content="\n".join([message, *notes]),
        summary=summary,
        changes=(FileChanged(path=shown, diff=diff),),
    )


def edit_file(ctx: ToolContext, path: str, old_str: str, new_str: str) -> ToolOutput:
    """Replace one exact, unique piece of text in a file with new text (an error says when
    old_str is not found, or found more than once, and what to do).

    Args:
        path: File path relative to the workspace root.
        old_str: The exact text to replace, including whitespace and indentation; it must
            occur exactly once in the file, so include enough surrounding lines.
        new_str: The text to put in its place (empty to delete old_str).
    """
    workspace = ctx.need_workspace()
    if old_str == "":
        raise ToolError(
            "edit_file: old_str is empty; copy the exact text to replace from read_file "
            "(to create a file, use write_file)"
        )
    if old_str == new_str:
        raise ToolError("edit_file: old_str and new_str are the same; nothing would change")
    with os_errors("edit_file", path, hint="to create a new file use write_file"):
        target = workspace.resolve(path, write=True)
        shown = workspace.relative(target)
        if _is_notebook(target) or _is_notebook(path):
            raise ToolError(f"edit_file: refusing to edit {shown} as raw text: {NOTEBOOK_WHY}")
        text = editable_text(
            workspace.read_bytes(path), shown, refusal="edit_file: it cannot be edited"
        )
        bom, text = text[: text.startswith(BOM)], text.removeprefix(BOM)
        old, new = _match_newlines(text, old_str, new_str)
        starts = occurrences(text, old)
        if len(starts) != 1:
            raise ToolError(match_problem("edit_file", "read_file", shown, text, old_str, starts))
        updated = text[: starts[0]] + new + text[starts[0] + len(old) :]
        secret = workspace.secret(path)
        notes = workspace.write_text(path, bom + updated)
    diff = unified_diff(text, updated, shown)
    added, removed = total_changes(diff)
    shown_diff = clip_diff(diff) if secret is None else SECRET_DIFF
    return ToolOutput(
        content="\n".join([f"edited {shown}:", shown_diff, *notes]),
        summary=f"{shown} +{added} −{removed}",
        changes=(FileChanged(path=shown, diff=diff),),
    )


def list_directory(ctx: ToolContext, path: str = ".") -> ToolOutput:
    """List a directory in the workspace: subdirectories first (with a trailing /), then files.

    Args:
        path: Directory path relative to the workspace root; "." is the root.
    """
    workspace = ctx.need_workspace()
    with os_errors("list_directory", path):
        entries = workspace.list_dir(path)
        shown = workspace.relative(workspace.resolve(path))
    entries.sort(key=lambda e: (not e.is_dir, e.name.lower(), e.name))
    label = "./" if shown == "." else f"{shown}/"
    lines = [_entry_line(e) for e in entries[:MAX_LIST_ENTRIES]]
    if len(entries) > MAX_LIST_ENTRIES:
        lines.append(
            f"… {len(entries) - MAX_LIST_ENTRIES:,} more entries not shown "
            f"({len(entries):,} in all); list a subdirectory to see less at once"
        )
    body = "\n".join(lines) if lines else "(empty directory)"
    return ToolOutput(
        content=f"{label} ({len(entries):,} entries)\n{body}",
        summary=f"{label} ({len(entries):,} entries)",
    )


def _is_notebook(path: str | Path) -> bool:
    return str(path).lower().endswith(".ipynb")


def _check_new_notebook(target: Path, shown: str, content: str) -> None:
    """A notebook is never overwritten as text; a new one must be a valid notebook."""
    if target.exists():
        raise ToolError(f"write_file: refusing to overwrite {shown} as raw text: {NOTEBOOK_WHY}")
    import nbformat  # only here: it is slow to import

    try:
        nbformat.validate(nbformat.reads(content, as_version=4))
    except Exception as exc:
        reason = first_line(str(exc), 200) or type(exc).__name__
        raise ToolError(
            f"write_file: {shown} would not be a valid notebook ({reason}); write nbformat 4 "
            "JSON, or create it with the notebook tools"
        ) from exc


def _numbered(shown: str, window: Window, end: int | None, note: str) -> ToolOutput:
    """The `cat -n` view of a line range, cut to the limits with a marker saying how to go on."""
    total, first = window.total, window.first
    if total == 0:
        return ToolOutput(content=f"{shown} is empty (0 lines)", summary=f"{shown} (empty)")
    if first > total:
        raise ToolError(
            f"read_file: {shown} has only {total:,} lines; start_line={first} is past the end"
        )
    last = first + len(window.lines) - 1
    out: list[str] = []
    size = 0
    for number, line, cut in zip(range(first, last + 1), window.lines, window.cut, strict=True):
        if cut:
            line = f"{line}… [{cut:,} more characters]"
        entry = f"{number:6d}\t{line}"
        if out and size + len(entry) > MAX_READ_CHARS:
            last = number - 1
            break
        out.append(entry)
        size += len(entry) + 1
    whole = first == 1 and last == total
    span = f"{total:,} lines" if whole else f"lines {first:,}-{last:,} of {total:,}"
    header = f"{shown} ({span}{'; ' + note if note else ''})"
    wanted = total if end is None else min(end, total)
    if last < wanted:
        out.append(
            f"… {wanted - last:,} more lines; call read_file with start_line={last + 1} "
            "to read more"
        )
    return ToolOutput(content="\n".join([header, *out]), summary=f"{shown} ({span})")


def _match_newlines(text: str, old: str, new: str) -> tuple[str, str]:
    """Models write \\n; in a CRLF file, match and insert \\r\\n instead when that is what fits."""
    if old in text or "\r\n" not in text or "\n" not in old or "\r\n" in old:
        return old, new
    crlf = old.replace("\n", "\r\n")
    return (crlf, new.replace("\r\n", "\n").replace("\n", "\r\n")) if crlf in text else (old, new)


def _entry_line(entry: DirEntry) -> str:
    if entry.outside:
        return f"{entry.name}  (symlink to outside the workspace; cannot be used)"
    link = "  (symlink)" if entry.is_symlink else ""
    if entry.is_dir:
        return f"{entry.name}/{link}"
    size = "" if entry.size is None else f"  ({human_bytes(entry.size)})"
    return f"{entry.name}{size}{link}"
