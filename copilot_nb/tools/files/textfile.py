"""A window of lines from a text file of any size, read in bounded pieces.

Tools run in a worker thread, but a single C call (decoding 50 MB, splitting it into lines) holds
the interpreter lock for its whole length and so stalls the kernel's event loop. Reading in 1 MB
chunks, counting newlines chunk by chunk and decoding only the lines that are shown keeps every
such call short, whatever the file's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import ToolError

CHUNK = 1 << 20
BOM = b"\xef\xbb\xbf"
_CONTINUATION = bytes(range(0x80, 0xC0))


class BinaryFile(Exception):
    """The file has a NUL byte near its start: it is not text."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


@dataclass(frozen=True, kw_only=True)
class Window:
    """Lines `first`.. of a file (decoded, without line ends), and how many lines it has."""

    lines: list[str]
    first: int
    total: int
    cut: list[int]
    """Per shown line: characters beyond `max_chars` that were left out (0 when none)."""
    valid_utf8: bool


def read_window(path: Path, first: int, last: int, *, max_chars: int) -> Window:
    """Lines first..last (1-based, inclusive) of `path`; every line is cut to `max_chars`."""
    keep_bytes = max_chars * 4 + 4
    kept: list[bytearray] = []
    chars: list[int] = []
    total = 0  # newlines seen so far; the line being read is number total + 1
    ends_with_newline = True  # an empty file has no unfinished last line
    with open(path, "rb") as f:
        chunk = f.read(CHUNK)
        if b"\x00" in chunk[:8192]:
            f.seek(0, 2)
            raise BinaryFile(f.tell())
        if chunk.startswith(BOM):
            chunk = chunk[len(BOM) :]
        while chunk:
            newlines = chunk.count(b"\n")
            if total + 1 <= last and total + 1 + newlines >= first:
                for offset, piece in enumerate(chunk.split(b"\n")):
                    number = total + 1 + offset
                    if first <= number <= last:
                        if number - first == len(kept):
                            kept.append(bytearray())
                            chars.append(0)
                        if len(kept[-1]) < keep_bytes:
                            kept[-1] += piece[: keep_bytes - len(kept[-1])]
                        chars[-1] += len(piece.translate(None, _CONTINUATION))
            total += newlines
            ends_with_newline = chunk.endswith(b"\n")
            chunk = f.read(CHUNK)
    if not ends_with_newline:
        total += 1  # a last line without a final newline
    shown = max(0, min(last, total) - first + 1)
    del kept[shown:], chars[shown:]  # the empty piece after a final newline
    lines: list[str] = []
    cut: list[int] = []
    valid = True
    for raw, count in zip(kept, chars, strict=True):
        data = bytes(raw).removesuffix(b"\r")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text, valid = data.decode("utf-8", errors="replace"), False
        count -= 1 if raw.endswith(b"\r") and len(raw) < keep_bytes else 0
        lines.append(text[:max_chars])
        cut.append(max(0, count - max_chars) if len(text) > max_chars else 0)
    return Window(lines=lines, first=first, total=total, cut=cut, valid_utf8=valid)


def editable_text(data: bytes, shown: str, *, refusal: str) -> str:
    """The text of a file a tool may change: not binary, and valid UTF-8. `refusal` ends each
    error (e.g. "edit_file: ... it cannot be edited"), so every editing tool says it its way."""
    tool, _, cannot = refusal.partition(":")
    if b"\x00" in data[:8192]:
        raise ToolError(
            f"{tool}: {shown} is a binary file ({len(data):,} bytes), not text; {cannot.strip()}"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{tool}: {shown} is not valid UTF-8 text; {cannot.strip()}") from None
