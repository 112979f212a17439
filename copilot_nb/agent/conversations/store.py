"""The conversation file: append-only, locked, and readable after any crash.

Every append is one `write` of whole lines to a file opened with `O_APPEND`, under an exclusive
`flock`, so two kernels on one notebook (or two tabs of it) never interleave inside a line and
never lose one. A kill mid-write can leave a torn last line: the next append starts on a fresh
line, and a reader skips the torn one and says so, so no earlier turn is ever lost. The first
line is the format's header; a file from a newer format is refused and never written.

Readers stream the file a line at a time and skip what they do not need by each line's first
bytes (`format.line_prefix`): a resume keeps only the newest turns that fit its byte budget, so
memory follows the context window, not the size of the file.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import private_dir
from ...errors import PolicyError
from ...policy import conversations_allowed
from .format import check_header, encode, header, line_prefix

_RECORD_START = re.compile(rb'\{"kind":"(\w+)","conversation":"([0-9A-Za-z_-]+)"')
_TURN_OF_MESSAGE = re.compile(rb'^\{"kind":"message","conversation":"[^"]*","turn":"([^"]*)"')
_TAIL = 64 * 1024


@dataclass(frozen=True, kw_only=True)
class Summary:
    """One conversation as `%copilot conversations` lists it."""

    conversation: str
    started: str
    last: str
    turns: int
    input_tokens: int
    output_tokens: int
    first_request: str


@dataclass(frozen=True, kw_only=True)
class Loaded:
    """A conversation read back: the newest turns' messages that fit the budget, every turn's
    record, and what could not be read."""

    conversation: str
    messages: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    started: str = ""
    left_out_turns: int = 0
    """Earlier turns beyond the budget: counted, not loaded."""
    begun: int = 0
    """Turns with a message, finished or not (a killed kernel's last turn has no turn record)."""
    problems: list[str] = field(default_factory=list)


class ConversationFile:
    """One notebook's saved conversations (`name.copilot-chat.jsonl`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._checked = False
        self.problems: list[str] = []
        """Lines the last read skipped (a torn last line after a crash), as sentences."""

    # --- writing ------------------------------------------------------------------------------

    def append(self, items: Iterable[Mapping[str, Any]]) -> None:
        """Write these records as whole lines at the end, under the lock (the header first in a
        new file; a fresh line after a torn one). NewerFormat, and nothing written, for a file
        of a newer format."""
        data = b"".join(encode(item) for item in items)
        if not data:
            return
        refusal = conversations_allowed()  # the administrator's policy: nothing is written
        if refusal:
            raise PolicyError(refusal)
        private_dir(self.path.parent)  # a folder it makes is owner-only; a notebook's exists
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            with _locked(fd):
                size = os.fstat(fd).st_size
                if size == 0:
                    data = encode(header()) + data
                else:
                    if not self._checked:
                        check_header(_first_record(fd), self.path)
                        self._checked = True
                    if os.pread(fd, 1, size - 1) != b"\n":
                        data = b"\n" + data  # after a torn line: ours starts a line of its own
                _write_all(fd, data)
        finally:
            os.close(fd)

    def sync(self) -> None:
        """Flush to the disk (at a turn's end: a power cut keeps every finished turn)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # --- reading ------------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.path.is_file() and self.path.stat().st_size > 0

    def current(self) -> str | None:
        """The conversation of the newest record (the one a restart resumes), or None."""
        if not self.exists():
            return None
        with open(self.path, "rb") as handle:
            check_header(_parse(handle.readline()), self.path)
            size = handle.seek(0, os.SEEK_END)
            window = _TAIL
            while True:
                handle.seek(max(0, size - window))
                found = _RECORD_START.findall(handle.read(window))
                if found:
                    return found[-1][1].decode()
                if window >= size:
                    return None
                window *= 4

    def summaries(self) -> list[Summary]:
        """Every conversation with at least one finished turn, oldest first."""
        starts: dict[str, str] = {}
        turns: dict[str, list[dict[str, Any]]] = {}
        for record in self._records(skip=(b'{"kind":"message"',)):
            conversation = str(record.get("conversation", ""))
            if record.get("kind") == "start":
                starts.setdefault(conversation, str(record.get("at", "")))
            elif record.get("kind") == "turn":
                turns.setdefault(conversation, []).append(record)
        out = []
        for conversation, done in turns.items():
            tokens = [t.get("tokens") or {} for t in done]
            out.append(
                Summary(
                    conversation=conversation,
                    started=starts.get(conversation, str(done[0].get("at", ""))),
                    last=str(done[-1].get("at", "")),
                    turns=len(done),
                    input_tokens=sum(int(t.get("input", 0)) for t in tokens),
                    output_tokens=sum(int(t.get("output", 0)) for t in tokens),
                    first_request=str(done[0].get("request", "")),
                )
            )
        return out

    def load(self, conversation: str, *, budget: int) -> Loaded:
        """The conversation's turn records, and the messages of its newest turns whose lines
        add up to at most `budget` bytes (the newest turn always), each turn's messages
        together in the order its turn began."""
        messages_prefix = line_prefix("message", conversation)
        kept: deque[tuple[str, list[bytes]]] = deque()
        by_turn: dict[str, list[bytes]] = {}
        size = 0
        left_out: set[str] = set()
        turns: list[dict[str, Any]] = []
        started = ""
        for line in self._lines():
            if line.startswith(messages_prefix):
                match = _TURN_OF_MESSAGE.match(line)
                turn = match.group(1).decode() if match else ""
                if turn in left_out:
                    continue
                if turn not in by_turn:
                    by_turn[turn] = []
                    kept.append((turn, by_turn[turn]))
                by_turn[turn].append(line)
                size += len(line)
                while size > budget and len(kept) > 1:
                    old, lines = kept.popleft()
                    size -= sum(len(item) for item in lines)
                    del by_turn[old]
                    left_out.add(old)
                continue
            if b'"message"' in line[:20] or _RECORD_START.match(line) is None:
                continue
            if f'"conversation":"{conversation}"'.encode() not in line[:80]:
                continue
            record = self._decode(line)
            if record is None:
                continue
            if record.get("kind") == "turn":
                turns.append(record)
            elif record.get("kind") == "start" and not started:
                started = str(record.get("at", ""))
        messages: list[dict[str, Any]] = []
        for _, lines in kept:
            for line in lines:
                record = self._decode(line)
                if record is not None and isinstance(record.get("message"), dict):
                    messages.append(record["message"])
        return Loaded(
            conversation=conversation,
            messages=messages,
            turns=turns,
            started=started,
            left_out_turns=len(left_out),
            begun=len(left_out) + len(kept),
            problems=list(self.problems),
        )

    def records(self, conversation: str) -> Iterator[dict[str, Any]]:
        """Every record of one conversation, in file order (for an export)."""
        mark = f'"conversation":"{conversation}"'.encode()
        for line in self._lines():
            if mark in line[:80]:
                record = self._decode(line)
                if record is not None:
                    yield record

    def _records(self, skip: tuple[bytes, ...] = ()) -> Iterator[dict[str, Any]]:
        for line in self._lines():
            if not line.startswith(skip):
                record = self._decode(line)
                if record is not None:
                    yield record

    def _lines(self) -> Iterator[bytes]:
        """The file's complete record lines after its header (which is checked); a torn last
        line is reported in `problems`, not yielded."""
        self.problems = []
        if not self.exists():
            return
        with open(self.path, "rb") as handle:
            check_header(_parse(handle.readline()), self.path)
            number = 1
            for line in handle:
                number += 1
                if not line.endswith(b"\n"):
                    self.problems.append(
                        f"{self.path.name}: line {number} is incomplete ({len(line):,} bytes, "
                        "a write cut off, e.g. by a killed kernel); it is skipped"
                    )
                    return
                if line.strip():
                    yield line

    def _decode(self, line: bytes) -> dict[str, Any] | None:
        record = _parse(line)
        if not isinstance(record, dict):
            self.problems.append(
                f"{self.path.name}: a line that is not a record ({line[:40]!r}…) is skipped"
            )
            return None
        return record


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _first_record(fd: int) -> Any:
    head = os.pread(fd, 4096, 0)
    return _parse(head.split(b"\n", 1)[0])


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@contextmanager
def _locked(fd: int) -> Iterator[None]:
    """An exclusive advisory lock on the open file (where the platform has `flock`)."""
    try:
        import fcntl
    except ImportError:  # Windows: O_APPEND and one write per append
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
