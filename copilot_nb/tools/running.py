"""How one tool call runs: awaited on the loop or in a worker thread, within a time limit.

Async tools are awaited on the kernel's loop (the kernel tools need its thread); synchronous ones
run in a worker thread so the kernel stays responsive. A time limit ends the *wait*, always on
time; it cannot always end the *work*: a thread cannot be killed, and an async tool may ignore
its cancellation. Those finish in the background and their results are thrown away.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Coroutine
from typing import Any

_log = logging.getLogger(__name__)
CANCEL_GRACE = 1.0
"""Seconds a cancelled call gets to unwind before the loop stops waiting for it."""


async def within(call: Coroutine[Any, Any, Any], limit: float | None) -> tuple[bool, Any]:
    """(True, result) when `call` finishes within `limit` seconds; else (False, None), promptly.

    The call runs as its own task, so the wait ends at the limit even when the call does not stop
    (a worker thread, a tool that ignores cancellation): it is cancelled, given `CANCEL_GRACE`
    to unwind, and then left to finish in the background with its result thrown away. A plain
    `wait_for` would instead wait for a call that ignores its cancellation.
    """
    if limit is None:
        return True, await call
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=limit)
    except BaseException:  # the run was cancelled: so is the call, given time to unwind
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_GRACE)
        task.add_done_callback(_discard)
        raise
    if done:
        return True, task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_GRACE)
    task.add_done_callback(_discard)
    return False, None


def _discard(task: asyncio.Future[Any]) -> None:
    """Fetch a stopped call's outcome, so asyncio does not log it as never retrieved."""
    if not task.cancelled() and task.exception() is not None:
        _log.debug("a tool call that timed out raised later", exc_info=task.exception())


def is_async(function: Callable[..., Any]) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    if inspect.iscoroutinefunction(function):
        return True
    return not inspect.isroutine(function) and inspect.iscoroutinefunction(type(function).__call__)


async def invoke(function: Callable[..., Any], args: dict[str, Any]) -> Any:
    """Await async tools on the loop; run sync ones in a thread so the kernel stays responsive."""
    if is_async(function):
        return await function(**args)
    result = await asyncio.to_thread(function, **args)
    if inspect.isawaitable(result):
        result = await result
    return result
