"""Events a running tool sends out while it runs: a subagent's own calls and questions.

A tool call is awaited as a task while this channel's events are handed out as they come, so the
parent's run can show a child's work, and ask its questions, before the call returns. When the
run is interrupted, the task is cancelled, and a subagent inside it stops with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable
from typing import Any

from ...events import AgentEvent


class SideChannel:
    """A queue of events beside one agent's run."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[AgentEvent] = asyncio.Queue()

    def emit(self, event: AgentEvent) -> None:
        self._queue.put_nowait(event)

    async def run(
        self, work: Awaitable[Any], result: list[Any]
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run `work`, handing out what is emitted meanwhile; its result goes into `result`."""
        running = asyncio.ensure_future(work)
        try:
            async for event in self._events(running):
                yield event
        finally:
            if not running.done():
                running.cancel()  # the run was interrupted: a subagent stops too
                with contextlib.suppress(BaseException):
                    await running
        result.append(running.result())

    async def _events(self, running: asyncio.Future[Any]) -> AsyncGenerator[AgentEvent, None]:
        while True:
            if not self._queue.empty():
                yield self._queue.get_nowait()
                continue
            if running.done():
                return
            waiter = asyncio.ensure_future(self._queue.get())
            done, _ = await asyncio.wait({waiter, running}, return_when=asyncio.FIRST_COMPLETED)
            if waiter in done:
                yield waiter.result()
            else:
                waiter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiter
