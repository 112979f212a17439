"""The engine of search_text: a regex over many files that can neither freeze nor outlive the run.

Patterns are compiled with the `regex` package (the syntax of Python's `re`) for two reasons: it
releases the interpreter lock while it matches, so the kernel's event loop keeps running, and it
takes a `timeout`, so a pattern that backtracks catastrophically (`(a|a)+$` on a line of `a`s) ends
with an error the model can act on instead of holding the search for minutes. It also defuses
the classic `(a+)+$` outright. Between files, between blocks and between matching lines the
search checks a stop event, set when the user stops the run, so no worker goes on unseen.

A file is searched in 1 MB blocks; an ASCII block as bytes with the pattern compiled for bytes
(the same matches on ASCII text, without decoding), any other block decoded as UTF-8 first. Files
that may hold secrets are skipped and counted: read_file shows them after the user approves.
"""

from __future__ import annotations

import bisect
import functools
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ToolError
from ...text import shorten
from ..registry import ToolOutput
from .lines import (
    FirstLine,
    LineCounter,
    as_lines,
    clip_line,
    compile_regex,
    for_ascii_bytes,
)
from .walk import FolderOpener, Stopped

MAX_MATCHES = 200
"""Matching lines shown by one search_text call; the rest are counted."""
MAX_SEARCH_BYTES = 50 * 1024 * 1024
"""Files bigger than this are not searched (read_file reads them a window at a time)."""
REGEX_TIMEOUT = 2.0
"""Seconds one regex call may take on one block of a file (1 MB, so a sane pattern needs
milliseconds); longer means catastrophic backtracking."""
BLOCK = 1 << 20
MAX_PASSED = 16
"""Further matches in a reported line passed over before the search restarts at the next line
(a pattern like `.` matches every character)."""
READ_SIZE = 1 << 16
NUL_WINDOW = 8192
"""A NUL byte among a file's first bytes makes it binary: not searched, counted."""
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
SKIP_NOTE = "gitignored files, .git and symlinks are skipped"


class _Big(Exception):
    """A file `search_files` stops before, for ripgrep."""


class _Batch:
    """Small files waiting to be searched together, joined by newlines."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.texts: list[Any] = []
        self.names: list[str] = []
        self.starts: list[int] = []
        self.size = 0


@dataclass(frozen=True, kw_only=True)
class Match:
    path: str
    line: int
    text: str


class TextSearch:
    """Matches gathered over many files: the first MAX_MATCHES kept, the rest counted."""

    def __init__(
        self,
        regex: str,
        *,
        stop: threading.Event | None = None,
        is_secret: Callable[[str], bool] = lambda relative: False,
    ) -> None:
        self.regex = regex
        self.stop = stop if stop is not None else threading.Event()
        self.is_secret = is_secret
        self.finished = threading.Event()
        """Set when `run` has returned, whatever the outcome."""
        self.pattern = compile_regex(regex)
        self.ascii_pattern = for_ascii_bytes(self.pattern)
        self.shown: list[Match] = []
        self.total = 0
        self.files: Counter[str] = Counter()
        self.searched = 0
        self.binary = 0
        self.too_big: list[str] = []
        self.secrets: list[str] = []
        self.current = ""
        self.big: int | None = None
        self.folder = FolderOpener()
        """Set while `search_files` stops before big files."""

    def run(self, files: Iterable[tuple[str, str]]) -> None:
        """Search every (relative, absolute) file; Stopped when the stop event is set."""
        batch = _Batch()
        try:
            for relative, path in files:
                if self.stop.is_set():
                    raise Stopped
                if self.is_secret(relative):
                    self.secrets.append(relative)
                    continue
                self._take(relative, path, batch)
            self._flush(batch)
        finally:
            self.folder.close()
            self.finished.set()

    def search_files(self, files: Sequence[tuple[str, str]], *, big: int | None = None) -> int:
        """Search these files now (not secrets: the caller has checked), their matches next.
        With `big`: stop before the first text file of at least `big` bytes (within the size
        limit), unsearched, and return its index; else len(files)."""
        batch, self.big = _Batch(), big
        try:
            for index, (relative, path) in enumerate(files):
                if self.stop.is_set():
                    raise Stopped
                try:
                    self._take(relative, path, batch)
                except _Big:
                    self._flush(batch)
                    return index
            self._flush(batch)
        finally:
            self.big = None
            self.folder.close()
        return len(files)

    def line_match(self, raw: bytes) -> tuple[str, int] | None:
        """One line, its end cut off, as this engine reads it: the text shown and where the
        pattern first matches in it, or None when it does not."""
        line = as_lines(raw, self.ascii_pattern is not None)
        found = self._find(self.pattern if isinstance(line, str) else self.ascii_pattern, line, 0)
        if found is None:
            return None
        return (line if isinstance(line, str) else line.decode("ascii")), int(found.start())

    def _take(self, rel: str, path: str, batch: _Batch) -> None:
        """Read one file; a small one joins the batch, a big one is searched block by block."""
        data = self._read(rel, path)
        if data is None:
            return
        if data.find(b"\x00", 0, NUL_WINDOW) != -1:
            self.binary += 1
            return
        self.searched += 1
        if len(data) > BLOCK:
            self._flush(batch)
            self._search_big(rel, data)
            return
        if b"\r" in data:  # lines as an editor shows them, so `$` works in CRLF files
            data = data.replace(b"\r\n", b"\n").removesuffix(b"\r")
        text: Any = data
        if not data.isascii() or self.ascii_pattern is None:
            text = data.decode("utf-8", errors="replace")
        if batch.texts and (
            batch.size + len(text) > BLOCK or type(text) is not type(batch.texts[0])
        ):
            self._flush(batch)
        batch.starts.append(batch.size)
        batch.names.append(rel)
        batch.texts.append(text)
        batch.size += len(text) + 1

    def _flush(self, batch: _Batch) -> None:
        """One regex call rules out every file of the batch without a match (most of them)."""
        if not batch.texts:
            return
        binary = isinstance(batch.texts[0], bytes)
        nl: Any = b"\n" if binary else "\n"
        text = nl.join(batch.texts)
        names, starts = batch.names, batch.starts
        batch.clear()
        self._scan(text, names, starts, 1, nl)

    def _search_big(self, rel: str, data: bytes) -> None:
        """A file over one block, searched a block (cut at a line end) at a time; lines are
        counted only as far as a match needs (counting them all took longer than the regex)."""
        position, lines = 0, LineCounter(data)
        while position < len(data):
            if self.stop.is_set():
                raise Stopped
            end = len(data)
            if end - position > BLOCK:
                cut = data.find(b"\n", position + BLOCK)
                end = len(data) if cut == -1 else cut + 1
            text = as_lines(data[position:end], self.ascii_pattern is not None)
            first = functools.partial(lines.at, position)
            self._scan(text, [rel], [0], first, b"\n" if isinstance(text, bytes) else "\n")
            position = end

    def _scan(
        self, text: Any, names: list[str], starts: list[int], first: FirstLine, nl: Any
    ) -> None:
        """The matching lines of the files joined in `text` (file i begins at starts[i]).

        One iteration over the whole text finds candidates, each confirmed within its line (a
        pattern may span lines, or files); further matches in a reported line are passed over,
        and the iteration starts afresh after a match that ran past its line.
        """
        pattern = self.pattern if isinstance(text, str) else self.ascii_pattern
        self.current = names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"
        position, index, number, counted = 0, -1, 0, 0
        while position <= len(text):
            matches = pattern.finditer(text, position, timeout=REGEX_TIMEOUT)
            passed = 0
            while True:
                try:
                    found = next(matches, None)
                except TimeoutError:
                    raise self._timed_out() from None
                if found is None:
                    return
                if self.stop.is_set():
                    raise Stopped
                reach = found.end()
                if found.start() < position:  # one more match in a line already reported
                    passed += 1
                    if reach > position or passed > MAX_PASSED:
                        break
                    continue
                at = bisect.bisect_right(starts, found.start()) - 1
                begin = starts[at]
                stop_at = starts[at + 1] - 1 if at + 1 < len(starts) else len(text)
                if at != index:
                    index, counted = at, begin
                    number = first if isinstance(first, int) else first()
                    self.current = names[at]
                if reach > stop_at:  # it runs into the next file: look within this one alone
                    found = self._find(pattern, text, max(position, begin), stop_at)
                    if found is None:
                        position = stop_at + 1
                        break
                start = text.rfind(nl, begin, found.start())
                start = begin if start == -1 else start + 1
                end = text.find(nl, found.start(), stop_at)
                end = stop_at if end == -1 else end
                line = text[start:end]
                hit = self._find(pattern, line, 0) if nl in found.group() else found
                number += text.count(nl, counted, start)
                counted = start
                if hit is not None:
                    column = hit.start() - (0 if hit is not found else start)
                    shown = line if isinstance(line, str) else line.decode("ascii")
                    self.record(names[at], number, shown, column)
                position = end + 1
                if reach > position:
                    break

    def _find(self, pattern: Any, text: Any, position: int, end: int | None = None) -> Any:
        """One bounded regex call; a timeout is the pattern's fault, said so to the model."""
        try:
            return pattern.search(text, position, end, timeout=REGEX_TIMEOUT)
        except TimeoutError:
            raise self._timed_out() from None

    def _timed_out(self) -> ToolError:
        return ToolError(
            f"search_text: the regex {shorten(self.regex, 120)!r} took longer than "
            f"{REGEX_TIMEOUT:g} s on {self.current}; it backtracks catastrophically, simplify "
            "it (e.g. (a|a)+ or (a+)+ can be a+, .*.* can be .*)"
        )

    def _read(self, rel: str, path: str) -> bytes | None:
        """The file's bytes, or None; a short first read is the end of a regular file.

        A longer file over the size limit is named without reading on, and one with a NUL in
        its first window is binary without reading on (its first window is all it returns)."""
        try:
            fd = self.folder.open(path, _READ_FLAGS)
        except OSError:
            return None
        try:
            first = os.read(fd, READ_SIZE)
            size = len(first) if len(first) < READ_SIZE else os.fstat(fd).st_size
            if (
                self.big is not None
                and self.big <= size <= MAX_SEARCH_BYTES
                and first.find(b"\x00", 0, NUL_WINDOW) == -1
            ):
                raise _Big
            if len(first) < READ_SIZE:
                return first
            if size > MAX_SEARCH_BYTES:
                self.too_big.append(rel)
                return None
            if first.find(b"\x00", 0, NUL_WINDOW) != -1:
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

    def record(self, rel: str, number: int, line: str, column: int) -> None:
        """One matching line (column: where the match starts), shown while there is room."""
        self.total += 1
        self.files[rel] += 1
        if len(self.shown) < MAX_MATCHES:
            self.shown.append(Match(path=rel, line=number, text=clip_line(line, column)))

    def record_count(self, rel: str, count: int) -> None:
        """Matching lines of a file that are counted, not shown (the room is taken)."""
        self.total += count
        self.files[rel] += count

    def output(self, glob: str | None) -> ToolOutput:
        """The result the model reads: matches, what was left out and how to narrow."""
        regex = self.regex
        where = f" in files matching {glob!r}" if glob else ""
        skipped = [SKIP_NOTE]
        if self.binary:
            skipped.append(f"{self.binary:,} binary files skipped")
        if self.too_big:
            skipped.append(
                f"{len(self.too_big):,} files over {MAX_SEARCH_BYTES // 2**20} MB not searched "
                f"(e.g. {self.too_big[0]}; read_file reads them a window at a time)"
            )
        if self.secrets:
            skipped.append(
                f"{len(self.secrets):,} files that may hold secrets not searched (e.g. "
                f"{self.secrets[0]}; read_file shows one after the user approves)"
            )
        if not self.total:
            return ToolOutput(
                content=f"no matches for {regex!r}{where} in {self.searched:,} files "
                f"({'; '.join(skipped)})",
                summary=f"{shorten(regex, 60)} (no matches)",
            )
        header = f"{self.total:,} matches in {len(self.files):,} files for {regex!r}{where}"
        lines = [f"{m.path}:{m.line}: {m.text}" for m in self.shown]
        if self.total > len(self.shown):
            lines.append(
                f"… {self.total - len(self.shown):,} more matches; narrow with "
                f"glob={narrower_glob(list(self.files), glob or '')!r} or a more specific regex"
            )
        if len(skipped) > 1:
            lines.append(f"({'; '.join(skipped[1:])})")
        return ToolOutput(
            content="\n".join([header, *lines]),
            summary=f"{shorten(regex, 60)} ({self.total:,} matches in {len(self.files):,} files)",
        )


def narrower_glob(paths: list[str], glob: str) -> str:
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
