"""When a model's stream reader pauses: only while pieces come from the network one by one,
faster than it reads them, so that the pieces arriving meanwhile are read from the socket at once.

Each read of a stream costs the loop some 0.2 ms across asyncio, anyio, httpcore and h11. While
a fast server's pieces come one at a time less than `GATHER` apart, the reader pauses `GATHER`
after a read, and what arrives meanwhile comes in one socket read (httpx still yields it one
HTTP chunk at a time, but from memory): that cut plain httpx's CPU for a 1,000-token/s stream by
a third. A pause only helps when pieces are on their way, so none follows the first read (the
first words show at once), a piece that was already received or already arriving (the rest of a
reply sent whole, of one socket read or of one write), a big read, or a slow piece; and none
follows the end, where the reader stops before it asks again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

GATHER = 0.008
"""Seconds the reader pauses; no piece waits longer than this for it."""
ARRIVING = 0.0002
"""Seconds under which a piece the reader had to ask the socket for was already arriving: the
rest of one write that the sockets' buffers split, not the model's next piece."""
BULK = 8 * 1024
"""Bytes a socket read brings when the server is ahead of the reader (a burst, or a reply sent
whole): the next read gets what is there at once, and a pause would gather nothing more. A
stream of 1,000 tokens a second brings some 2 KB in a pause."""


@dataclass
class ReadPace:
    """The pauses of one stream's reader, decided read by read."""

    gather: float = GATHER
    reads: int = 0
    brought: int = 0
    """Bytes the last socket read brought so far."""

    def pause_after(self, size: int, *, waited: float, received: bool) -> float:
        """Seconds to pause (0: none) after a read of `size` bytes that took `waited` seconds;
        `received`: its piece was already in memory, from the socket read before it."""
        self.reads += 1
        if received:
            self.brought += size
            return 0.0
        before, self.brought = self.brought, size
        if self.reads == 1 or before >= BULK or not ARRIVING <= waited < self.gather:
            return 0.0
        return self.gather


async def next_piece(chunks: AsyncIterator[bytes]) -> tuple[bytes, float, bool] | None:
    """The stream's next piece, the seconds its read took, and whether the piece was already
    received (the read never gave the loop a turn, so a callback queued before it has not run);
    None at the end."""
    gave_way: list[bool] = []
    mark = asyncio.get_running_loop().call_soon(gave_way.append, True)
    started = time.monotonic()
    try:
        chunk = await anext(chunks)
    except StopAsyncIteration:
        return None
    finally:
        mark.cancel()
    return chunk, time.monotonic() - started, not gave_way
