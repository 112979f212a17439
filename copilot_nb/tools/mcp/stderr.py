"""What a stdio server writes to stderr, kept as a bounded tail.

A server may write without end (a debug log, a loop printing a warning): the child writes into a
pipe that a thread drains at once, so the child never blocks on a full pipe, and only the last
`limit` bytes are kept, for the error messages that quote them. Nothing grows with what the
server writes: not the kernel's memory, not a file on disk.
"""

from __future__ import annotations

import os
import select
import threading
import time
from typing import TextIO

try:
    import fcntl
    import termios
except ImportError:  # pragma: no cover - Windows: `settle` waits for nothing
    fcntl = None  # type: ignore[assignment]

TAIL_BYTES = 64 * 1024
"""Bytes of a server's stderr kept (the newest)."""
_CHUNK = 64 * 1024


class StderrTail:
    """A pipe for a child's stderr (`file`) and the last `limit` bytes that came through it."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self.received = 0
        """Bytes read in all (kept or not)."""
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._reading = False
        """Between the pipe turning readable and its bytes landing in the tail."""
        read_end, write_end = os.pipe()
        self._read_end = read_end
        self.file: TextIO = os.fdopen(write_end, "w", encoding="utf-8", errors="replace")
        """What the child's stderr is: pass it as the SDK's `errlog`."""
        self._reader = threading.Thread(
            target=self._drain, args=(read_end,), name="copilot_nb-mcp-stderr", daemon=True
        )
        self._reader.start()

    def _drain(self, fd: int) -> None:
        """Read until every writer closed its end (the children and `close()`)."""
        try:
            while True:
                select.select([fd], [], [])
                self._reading = True
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                with self._lock:
                    self.received += len(chunk)
                    self._tail += chunk
                    if len(self._tail) > self.limit:
                        del self._tail[: len(self._tail) - self.limit]
                self._reading = False
        except (OSError, ValueError):
            pass
        finally:
            self._reading = False
            os.close(fd)

    def settle(self, timeout: float = 0.25) -> None:
        """Wait (briefly) until what is already in the pipe is in the tail.

        A server that writes why it fails and exits is seen closed by the client at once, while
        the reader thread may not have run yet: the error message would miss its last words.
        """
        if fcntl is None:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                pending = int.from_bytes(
                    fcntl.ioctl(self._read_end, termios.FIONREAD, b"\0\0\0\0"), "little"
                )
            except OSError:  # the reader closed the pipe: everything is in
                return
            if not pending and not self._reading:
                return
            time.sleep(0.001)

    def text(self) -> str:
        """The kept tail as text (a cut multi-byte character at its start is replaced)."""
        with self._lock:
            data = bytes(self._tail)
        return data.decode("utf-8", errors="replace")

    def close(self) -> None:
        """Close our end of the pipe; the reader ends once the children's ends are closed too."""
        self.file.close()
