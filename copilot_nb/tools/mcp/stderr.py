"""What a stdio server writes to stderr, kept as a bounded tail.

A server may write without end (a debug log, a loop printing a warning): the child writes into a
pipe that a thread drains at once, so the child never blocks on a full pipe, and only the last
`limit` bytes are kept, for the error messages that quote them. Nothing grows with what the
server writes: not the kernel's memory, not a file on disk.
"""

from __future__ import annotations

import os
import threading
from typing import TextIO

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
        read_end, write_end = os.pipe()
        self.file: TextIO = os.fdopen(write_end, "w", encoding="utf-8", errors="replace")
        """What the child's stderr is: pass it as the SDK's `errlog`."""
        self._reader = threading.Thread(
            target=self._drain, args=(read_end,), name="copilot_nb-mcp-stderr", daemon=True
        )
        self._reader.start()

    def _drain(self, fd: int) -> None:
        """Read until every writer closed its end (the children and `close()`)."""
        try:
            while chunk := os.read(fd, _CHUNK):
                with self._lock:
                    self.received += len(chunk)
                    self._tail += chunk
                    if len(self._tail) > self.limit:
                        del self._tail[: len(self._tail) - self.limit]
        except OSError:
            pass
        finally:
            os.close(fd)

    def text(self) -> str:
        """The kept tail as text (a cut multi-byte character at its start is replaced)."""
        with self._lock:
            data = bytes(self._tail)
        return data.decode("utf-8", errors="replace")

    def close(self) -> None:
        """Close our end of the pipe; the reader ends once the children's ends are closed too."""
        self.file.close()
