"""Workspace tools beyond one file: find_files, search_text, move_path and delete_path.

Searches see the project as git does (`.git` and gitignored paths are skipped, see `walk.py`) and
run in a worker thread like every sync tool; a file is searched in 1 MB blocks so no single call
holds the interpreter long enough to stall the kernel's event loop. Results are capped with a
marker that says how to narrow. Moves and deletes go through the `Workspace`, so the protected
paths hold and each change is checkpointed for undo.
"""

from __future__ import annotations

import errno
import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AnyStr

from ..errors import ToolError
from ..events import FileChanged
from ..sandbox import Workspace
from .registry import ToolOutput, ToolSet, tool
from .walk import Glob, WalkStats, compile_glob, walk_files

MAX_FOUND = 500
"""Paths shown by one find_files call."""
MAX_MATCHES = 200
"""Matching lines shown by one search_text call; the rest are counted."""
MAX_MATCH_CHARS = 300
"""Characters shown of one matching line, around the match."""
MAX_SEARCH_BYTES = 50 * 1024 * 1024
"""Files bigger than this are not searched (read_file reads them a window at a time)."""
BLOCK = 1 << 20
READ_SIZE = 1 << 16
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
SKIP_NOTE = "gitignored files, .git and symlinks are skipped"


def search_tools(workspace: Workspace) -> ToolSet:
    """find_files, search_text, move_path and delete_path bound to one workspace."""

    @tool
    def find_files(glob: str) -> ToolOutput:
        """Find files by a glob relative to the workspace root; returns the sorted paths.
        `**` crosses folders (`src/**/*.py`), `*` and `?` do not, `{a,b}` gives choices, and a
        glob without a slash matches file names at any depth (`*.py`). Gitignored files and
        .git are skipped.

        Args:
            glob: E.g. "**/*.py", "src/**/test_*.py", "*.{md,txt}".
        """
        compiled = _glob("find_files", glob)
        stats = WalkStats()
        found = sorted(
            rel
            for rel, _ in walk_files(workspace.root, compiled.start, stats)
            if compiled.matches(rel)
        )
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
                f"(e.g. {_narrower_glob(found, glob)!r}) to see them"
            )
        header = f"{len(found):,} files match {glob!r}"
        return ToolOutput(
            content="\n".join([header, *lines]), summary=f"{glob} ({len(found):,} files)"
        )

    @tool
    def search_text(regex: str, glob: str | None = None) -> ToolOutput:
        """Search file contents with a Python regular expression, line by line like `grep -n`.
        Prints `path:line: text` for each matching line; binary and gitignored files are
        skipped. Start the regex with `(?i)` to ignore case.

        Args:
            regex: A Python `re` pattern, e.g. "def \\w+_total" or "TODO|FIXME".
            glob: Only search files matching this glob, e.g. "**/*.py" or "src/**".
        """
        try:
            pattern = re.compile(_per_line(regex), re.MULTILINE)
        except re.error as exc:
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            raise ToolError(
                f"search_text: {regex!r} is not a valid Python regular expression "
                f"({exc.msg}{where}); escape characters such as ( [ . * + ? with \\ to match "
                "them literally"
            ) from exc
        compiled = _glob("search_text", glob) if glob else None
        result = _Search(pattern)
        stats = WalkStats()
        for rel, path in walk_files(workspace.root, compiled.start if compiled else "", stats):
            if compiled is None or compiled.matches(rel):
                result.search_file(rel, path)
        return result.output(regex, glob)

    @tool(category="edit")
    def move_path(source: str, destination: str) -> ToolOutput:
        """Move or rename a file or folder in the workspace; missing parent folders are created.

        Args:
            source: The file or folder to move.
            destination: Its new path (it must not exist yet).
        """
        with _os_errors("move_path", source, destination):
            src = workspace.resolve_entry(source, action="move")
            dst = workspace.relative(workspace.resolve_entry(destination, action="move onto"))
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

    @tool(category="edit")
    def delete_path(path: str, recursive: bool = False) -> ToolOutput:
        """Delete a file, a symlink (not what it points to) or a folder in the workspace.

        Args:
            path: What to delete.
            recursive: Must be true to delete a folder that is not empty, with everything in it.
        """
        with _os_errors("delete_path", path, ""):
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

    return ToolSet([find_files, search_text, move_path, delete_path])


@dataclass(frozen=True, kw_only=True)
class Match:
    path: str
    line: int
    text: str


class _Search:
    """Matches gathered over many files: the first MAX_MATCHES kept, the rest counted.

    An ASCII file is searched as bytes with the pattern compiled for bytes (the same matches on
    ASCII text, without decoding); any other file is decoded as UTF-8 first.
    """

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        try:
            self.ascii_pattern: re.Pattern[bytes] | None = re.compile(
                pattern.pattern.encode("ascii"), pattern.flags & ~re.UNICODE
            )
        except (UnicodeEncodeError, re.error):
            self.ascii_pattern = None
        self.shown: list[Match] = []
        self.total = 0
        self.files: Counter[str] = Counter()
        self.searched = 0
        self.binary = 0
        self.too_big: list[str] = []

    def search_file(self, rel: str, path: str) -> None:
        data = self._read(rel, path)
        if data is None:
            return
        if data.find(b"\x00", 0, 8192) != -1:
            self.binary += 1
            return
        self.searched += 1
        if len(data) <= BLOCK:
            self._search_bytes(rel, data, 1)
            return
        position, line = 0, 1
        while position < len(data):
            end = len(data)
            if end - position > BLOCK:
                cut = data.find(b"\n", position + BLOCK)
                end = len(data) if cut == -1 else cut + 1
            self._search_bytes(rel, data[position:end], line)
            line += data.count(b"\n", position, end)
            position = end

    def _search_bytes(self, rel: str, block: bytes, line: int) -> None:
        if b"\r" in block:  # lines are matched as an editor shows them, so `$` works in CRLF
            block = block.replace(b"\r\n", b"\n").removesuffix(b"\r")
        if self.ascii_pattern is not None and block.isascii():
            found = self.ascii_pattern.search(block)
            if found is not None:
                self._search_block(rel, block, line, self.ascii_pattern, b"\n", found)
        else:
            text = block.decode("utf-8", errors="replace")
            hit = self.pattern.search(text)
            if hit is not None:
                self._search_block(rel, text, line, self.pattern, "\n", hit)

    def _read(self, rel: str, path: str) -> bytes | None:
        """The file's bytes, or None; a short first read is the end of a regular file."""
        try:
            fd = os.open(path, _READ_FLAGS)
        except OSError:
            return None
        try:
            first = os.read(fd, READ_SIZE)
            if len(first) < READ_SIZE:
                return first
            pieces, size = [first], len(first)
            while piece := os.read(fd, BLOCK):
                pieces.append(piece)
                size += len(piece)
                if size > MAX_SEARCH_BYTES:
                    self.too_big.append(rel)
                    return None
            return b"".join(pieces)
        except OSError:
            return None
        finally:
            os.close(fd)

    def _search_block(
        self,
        rel: str,
        text: AnyStr,
        first_line: int,
        pattern: re.Pattern[AnyStr],
        nl: AnyStr,
        found: re.Match[AnyStr] | None,
    ) -> None:
        """Candidate lines come from one search over the whole block; each is then confirmed."""
        number, counted = first_line, 0
        while found is not None:
            start = text.rfind(nl, 0, found.start()) + 1
            end = text.find(nl, found.start())
            end = len(text) if end == -1 else end
            line = text[start:end]
            hit = pattern.search(line) if nl in found.group() else found
            number += text.count(nl, counted, start)
            counted = start
            if hit is not None:
                column = hit.start() - (0 if hit is not found else start)
                shown = line if isinstance(line, str) else line.decode("ascii")
                self._add(rel, number, shown, column)
            if end >= len(text):
                break
            found = pattern.search(text, end + 1)

    def _add(self, rel: str, number: int, line: str, column: int) -> None:
        self.total += 1
        self.files[rel] += 1
        if len(self.shown) < MAX_MATCHES:
            self.shown.append(Match(path=rel, line=number, text=_clip_line(line, column)))

    def output(self, regex: str, glob: str | None) -> ToolOutput:
        where = f" in files matching {glob!r}" if glob else ""
        skipped = [SKIP_NOTE]
        if self.binary:
            skipped.append(f"{self.binary:,} binary files skipped")
        if self.too_big:
            skipped.append(
                f"{len(self.too_big):,} files over {MAX_SEARCH_BYTES // 2**20} MB not searched "
                f"(e.g. {self.too_big[0]}; read_file reads them a window at a time)"
            )
        if not self.total:
            return ToolOutput(
                content=f"no matches for {regex!r}{where} in {self.searched:,} files "
                f"({'; '.join(skipped)})",
                summary=f"{_short(regex)} (no matches)",
            )
        header = f"{self.total:,} matches in {len(self.files):,} files for {regex!r}{where}"
        lines = [f"{m.path}:{m.line}: {m.text}" for m in self.shown]
        if self.total > len(self.shown):
            lines.append(
                f"… {self.total - len(self.shown):,} more matches; narrow with "
                f"glob={_narrower_glob(list(self.files), glob or '')!r} or a more specific regex"
            )
        if len(skipped) > 1:
            lines.append(f"({'; '.join(skipped[1:])})")
        return ToolOutput(
            content="\n".join([header, *lines]),
            summary=f"{_short(regex)} ({self.total:,} matches in {len(self.files):,} files)",
        )


_STRING_ANCHOR = re.compile(r"(?<!\\)((?:\\\\)*)\\([AZ])")


def _per_line(regex: str) -> str:
    r"""Lines are searched one by one, so \A and \Z mean a line's start and end: ^ and $."""
    return _STRING_ANCHOR.sub(lambda m: m.group(1) + ("^" if m.group(2) == "A" else "$"), regex)


def _clip_line(line: str, column: int) -> str:
    """A long line shown around its match, with … where it was cut."""
    line = line.rstrip()
    if len(line) <= MAX_MATCH_CHARS:
        return line
    start = max(0, min(column - MAX_MATCH_CHARS // 3, len(line) - MAX_MATCH_CHARS))
    piece = line[start : start + MAX_MATCH_CHARS]
    return ("…" if start else "") + piece + ("…" if start + MAX_MATCH_CHARS < len(line) else "")


def _narrower_glob(paths: list[str], glob: str) -> str:
    """A glob that covers fewer of these paths: their commonest folder, file type, or file."""
    common = os.path.commonpath([min(paths), max(paths)]) if len(paths) > 1 else ""
    prefix = f"{common}/" if common else ""  # the folder all share, without a list per path
    folders = Counter(p[len(prefix) :].partition("/")[0] for p in paths if "/" in p[len(prefix) :])
    if len(folders) > 1 or (folders and sum(folders.values()) < len(paths)):
        return f"{prefix}{folders.most_common(1)[0][0]}/**"
    suffixes = Counter(os.path.splitext(p)[1] for p in paths)
    if len(suffixes) > 1 and suffixes.most_common(1)[0][0]:
        return f"{prefix}**/*{suffixes.most_common(1)[0][0]}"
    return paths[0]


def _glob(name: str, text: str) -> Glob:
    try:
        return compile_glob(text)
    except ValueError as exc:
        raise ToolError(f"{name}: {exc}; e.g. '**/*.py' or 'src/**'") from exc


def _count(node: Path) -> int | None:
    """Files under a real folder (None for a file or a symlink)."""
    if not node.is_dir() or node.is_symlink():
        return None
    return sum(len(files) for _, _, files in os.walk(node))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextmanager
def _os_errors(name: str, path: str, destination: str) -> Iterator[None]:
    """The OS's errors as sentences that tell the model its next step."""
    try:
        yield
    except FileNotFoundError as exc:
        raise ToolError(
            f"{name}: {path!r} does not exist in the workspace; call find_files or "
            "list_directory to see what exists"
        ) from exc
    except FileExistsError as exc:
        raise ToolError(
            f"{name}: {destination!r} already exists; choose another destination or delete it "
            "first with delete_path"
        ) from exc
    except NotADirectoryError as exc:
        raise ToolError(
            f"{name}: a part of {destination or path!r} is a file, not a folder"
        ) from exc
    except PermissionError as exc:
        raise ToolError(f"{name}: permission denied ({exc.strerror})") from exc
