"""The patch envelope the codex models write, parsed into file operations and applied to text.

Pure: text in, operations or text out, no file system (the tool that writes is `patch_tool.py`).
The format, as OpenAI documents it for its codex models:

    *** Begin Patch
    *** Add File: path          every following line is '+' and a line of the new file
    *** Delete File: path       nothing follows
    *** Update File: path
    *** Move to: new/path       optional: the file is renamed once patched
    @@ def context():           a hunk; the text after '@@' (optional) names a line above it
     context line               ' ' kept, '-' removed, '+' added
    *** End of File             optional: the hunk ends at the end of the file
    *** End Patch

A hunk's kept and removed lines are looked for after the previous hunk of the same file: exactly,
then ignoring trailing whitespace, then surrounding whitespace, then typographic punctuation. A hunk
with no '@@' text must match once; one with '@@' text takes the first match below that line.
Every error names the patch line it is about and says what to send instead.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard, Union

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
DELETE = "*** Delete File:"
UPDATE = "*** Update File:"
MOVE = "*** Move to:"
END_OF_FILE = "*** End of File"
_HEADERS = (ADD, DELETE, UPDATE)
HEADERS_HINT = "*** Add File: PATH, *** Update File: PATH or *** Delete File: PATH"


class PatchError(Exception):
    """The patch is malformed or does not fit the files: the message is for the model."""


@dataclass(frozen=True, kw_only=True)
class Hunk:
    """One '@@' section: the lines it expects (kept and removed) and the lines it leaves."""

    line: int
    """The patch line the hunk starts on (1-based)."""
    headers: tuple[str, ...]
    """The text after each '@@' above it: lines to find first, in order ('' ones dropped)."""
    body: tuple[str, ...]
    """Its lines as written, each with its ' ', '-' or '+' ('' is an empty context line)."""
    at_end: bool = False
    """`*** End of File` closed it: its lines are the last of the file."""

    @property
    def old(self) -> tuple[str, ...]:
        """The lines it expects in the file: context and removed."""
        return tuple(line[1:] for line in self.body if line[:1] != "+")

    @property
    def new(self) -> tuple[str, ...]:
        """The lines it leaves: context and added."""
        return tuple(line[1:] for line in self.body if line[:1] != "-")

    def replace(self, found: Sequence[str]) -> list[str]:
        """The new lines for `found` (the file's lines it matched): context lines stay as the
        file has them, so a match that ignored whitespace never rewrites a line it keeps."""
        out, at = [], 0
        for line in self.body:
            if line[:1] == "+":
                out.append(line[1:])
                continue
            if line[:1] != "-":
                out.append(found[at])
            at += 1
        return out


@dataclass(frozen=True, kw_only=True)
class AddFile:
    path: str
    content: str
    line: int


@dataclass(frozen=True, kw_only=True)
class DeleteFile:
    path: str
    line: int


@dataclass(frozen=True, kw_only=True)
class UpdateFile:
    path: str
    hunks: tuple[Hunk, ...]
    line: int
    move_to: str = ""
    """Where the patched file goes ('' to stay)."""


FileOp = Union[AddFile, DeleteFile, UpdateFile]


def is_patch(text: object) -> TypeGuard[str]:
    """Whether text looks like a patch envelope (for previews and summaries, not validation)."""
    return isinstance(text, str) and text.lstrip().startswith(BEGIN)


def patch_paths(text: str) -> list[str]:
    """The paths a patch names (added, updated, moved to, deleted), in order; never raises."""
    paths = []
    for line in text.split("\n"):
        for marker in (*_HEADERS, MOVE):
            if line.startswith(marker) and line[len(marker) :].strip():
                paths.append(line[len(marker) :].strip())
    return list(dict.fromkeys(paths))


def parse_patch(text: str) -> tuple[FileOp, ...]:
    """The operations of a patch, in order; PatchError says which line is wrong and why."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise PatchError(f"the patch is empty; send '{BEGIN}', the file operations, '{END}'")
    if lines[first].strip() != BEGIN:
        raise PatchError(
            f"line {first + 1}: the patch must start with '{BEGIN}', not {lines[first]!r}"
        )
    last = max(i for i, line in enumerate(lines) if line.strip())
    if lines[last].strip() != END or last == first:
        raise PatchError(
            f"line {last + 1}: the patch must end with '{END}' on a line of its own "
            f"(the last line is {lines[last]!r}); send the whole patch"
        )
    reader = _Reader(lines, first + 1, last)
    ops: list[FileOp] = []
    seen: dict[str, int] = {}
    while reader.more():
        number, line = reader.take()
        if not line.strip():
            continue
        if line.startswith(ADD):
            op: FileOp = _add(reader, _path(line, ADD, number), number)
        elif line.startswith(DELETE):
            op = _delete(reader, _path(line, DELETE, number), number)
        elif line.startswith(UPDATE):
            op = _update(reader, _path(line, UPDATE, number), number)
        elif line.startswith("***"):
            raise PatchError(f"line {number}: {line!r} is not a patch header; use {HEADERS_HINT}")
        else:
            raise PatchError(
                f"line {number}: expected a file header ({HEADERS_HINT}), got {line!r}"
            )
        for path in (op.path, getattr(op, "move_to", "")):
            key = posixpath.normpath(path) if path else ""
            if key in seen:
                raise PatchError(
                    f"line {number}: {path} is named twice in this patch (also at line "
                    f"{seen[key]}); put all of a file's hunks under one '{UPDATE} {path}'"
                )
            if key:
                seen[key] = number
        ops.append(op)
    if not ops:
        raise PatchError(f"the patch has no file operations; add at least one of {HEADERS_HINT}")
    return tuple(ops)


class _Reader:
    """The envelope's inner lines, with their 1-based numbers in the patch."""

    def __init__(self, lines: list[str], start: int, stop: int) -> None:
        self.lines, self.at, self.stop = lines, start, stop

    def more(self) -> bool:
        return self.at < self.stop

    def peek(self) -> str:
        return self.lines[self.at]

    def take(self) -> tuple[int, str]:
        self.at += 1
        return self.at, self.lines[self.at - 1]

    def at_header(self) -> bool:
        """Whether the next line starts another file (or the section ends there)."""
        return not self.more() or self.peek().startswith(_HEADERS)

    def blank_to_header(self) -> bool:
        """Whether only blank lines are left before the next file header."""
        for line in self.lines[self.at : self.stop]:
            if line.startswith(_HEADERS):
                return True
            if line.strip():
                return False
        return True


def _path(line: str, marker: str, number: int) -> str:
    path = line[len(marker) :].strip()
    if not path:
        raise PatchError(f"line {number}: {marker} needs a path, e.g. '{marker} src/app.py'")
    return path


def _add(reader: _Reader, path: str, number: int) -> AddFile:
    body: list[str] = []
    while not reader.at_header():
        if not reader.peek().strip() and reader.blank_to_header():
            break
        at, line = reader.take()
        if not line.startswith("+"):
            raise PatchError(
                f"line {at}: every line of an added file starts with '+' (an empty line is "
                f"'+'); {line!r} in '{ADD} {path}' does not"
            )
        body.append(line[1:])
    return AddFile(path=path, content="".join(f"{line}\n" for line in body), line=number)


def _delete(reader: _Reader, path: str, number: int) -> DeleteFile:
    while not reader.at_header():
        at, line = reader.take()
        if line.strip():
            raise PatchError(
                f"line {at}: '{DELETE} {path}' takes no lines; to change the file instead use "
                f"'{UPDATE} {path}' with @@ hunks"
            )
    return DeleteFile(path=path, line=number)


def _update(reader: _Reader, path: str, number: int) -> UpdateFile:
    move_to = ""
    if reader.more() and reader.peek().startswith(MOVE):
        at, line = reader.take()
        move_to = _path(line, MOVE, at)
    hunks: list[Hunk] = []
    headers: list[str] = []  # the hunk being read: its '@@' texts, lines, first line
    body: list[str] = []
    start, at_end = 0, False

    def close() -> None:
        while body and body[-1] == "":  # blank lines before the next section are not context
            body.pop()
        if not body:
            where = f"the hunk at line {start}" if start else f"'{UPDATE} {path}'"
            raise PatchError(
                f"line {start or number}: {where} has no lines; give ' ' context, '-' removed "
                "and '+' added lines after its @@"
            )
        hunks.append(Hunk(line=start, headers=tuple(headers), body=tuple(body), at_end=at_end))

    while not reader.at_header():
        at, line = reader.take()
        if line.startswith("@@"):
            if body or at_end:
                close()
                headers, body, start, at_end = [], [], 0, False
            start = start or at
            if line[2:].strip():
                headers.append(line[2:].strip())
        elif line.strip() == END_OF_FILE:
            if not body:
                raise PatchError(f"line {at}: '{END_OF_FILE}' must end a hunk that has lines")
            at_end = True
        elif at_end and line.strip():
            raise PatchError(
                f"line {at}: a hunk ends at '{END_OF_FILE}'; start the next one with '@@'"
            )
        elif line[:1] in (" ", "-", "+") or line == "":
            start = start or at
            body.append(line)
        else:
            raise PatchError(
                f"line {at}: {line!r} in '{UPDATE} {path}' does not start with ' ' (a context "
                "line), '-' (removed) or '+' (added); prefix every line of a hunk, an empty "
                "context line with a single space"
            )
    if start or body:
        close()
    if not hunks and not move_to:
        raise PatchError(
            f"line {number}: '{UPDATE} {path}' has no hunks; add '@@' and the lines to change"
        )
    return UpdateFile(path=path, hunks=tuple(hunks), line=number, move_to=move_to)
