"""How code reaches the kernel: its event loop from another thread, a coroutine from synchronous
code, and the user's namespace. Each idiom lives here once, so every caller gets the same care
(a closed loop, an interrupt, a shell that is not IPython's).

A comm or a subshell may call us on a thread that is not the loop's; a line magic or
`run_cell_magic` is synchronous code inside the kernel's running loop; tools and the session may
run with no shell at all (a script, the proxy).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, or None (a plain thread, or no loop yet)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def call_on(
    loop: asyncio.AbstractEventLoop | None, callback: Callable[..., Any], *args: Any
) -> None:
    """`callback(*args)` on `loop`'s thread: handed to that loop from any other thread, else at
    once (called there, no loop known, or a closed loop that runs nothing any more)."""
    if loop is None or loop.is_closed() or running_loop() is loop:
        callback(*args)
    else:
        loop.call_soon_threadsafe(callback, *args)


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from synchronous code: on the kernel's running loop, entered
    again (`nest_asyncio`) so the kernel still handles widget and comm messages while it waits;
    else on a loop of its own. An interrupt cancels the coroutine, waits for it to unwind, and
    is raised again, so nothing half-done is left running."""
    loop = running_loop()
    if loop is not None:
        import nest_asyncio

        nest_asyncio.apply(loop)
        return _until_done(loop, coro)
    own = asyncio.new_event_loop()
    try:
        return _until_done(own, coro)
    finally:
        own.run_until_complete(own.shutdown_asyncgens())
        own.close()


def _until_done(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        raise


SIGNAL_WAKE = 0.1
"""Seconds between the loop's wake-ups while a turn waits (`signals_heard`)."""


@contextlib.contextmanager
def signals_heard(every: float = SIGNAL_WAKE) -> Iterator[None]:
    """Wake the running loop every `every` seconds while inside. Python runs a signal's handler
    only when the main thread runs Python code, and the kernel delivers an interrupt as SIGINT,
    which ipykernel's handler turns into cancelling the cell. A turn waiting for a server that
    has not begun to answer (a local model reading a long prompt) leaves the loop asleep in
    epoll, so the interrupt would wait for the server's first byte; a wake-up a tenth of a
    second costs nothing and hears it at once."""
    loop = asyncio.get_running_loop()
    handle: asyncio.TimerHandle | None = None

    def wake() -> None:
        nonlocal handle
        handle = loop.call_later(every, wake)

    wake()
    try:
        yield
    finally:
        if handle is not None:
            handle.cancel()


def user_namespace(shell: Any) -> dict[str, Any]:
    """The user's variables (`shell.user_ns`), or an empty namespace without an IPython shell."""
    namespace = getattr(shell, "user_ns", None)
    return namespace if namespace is not None else {}


def hidden_names(shell: Any) -> dict[str, Any]:
    """IPython's own names (`user_ns_hidden`), so a user's variable is told from them."""
    return getattr(shell, "user_ns_hidden", None) or {}


def request_header(shell: Any) -> dict[str, Any]:
    """The header of the kernel request running now ({} outside a kernel or any request): which
    front end asked (`session`) and what (`msg_type`, `msg_id`)."""
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # a kernel shutting down, or one without parents
        parent = None
    header = (parent or {}).get("header") or {}
    return dict(header)
