"""The kernel's Interrupt stops the agent's run too, whether a cell runs or the kernel is idle.

An interrupt is SIGINT, which Python delivers to the main thread only; a run goes on on the run
thread (`runs.py`), so on its own it would not notice. ipykernel sets the handler around each
request (`pre_handler_hook`: raise KeyboardInterrupt in the cell; `post_handler_hook`: the idle
handler, which ignores it). Each time it does, the handler it set is wrapped so that it first
stops the run going on, then does what it did. Installed once per kernel, at its first run.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

_MARK = "_copilot_nb_stops_runs"


def stop_runs_on_interrupt(shell: Any | None, stop: Callable[[], object]) -> None:
    """From now on, SIGINT calls `stop` before the kernel's own handling of it."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None or getattr(kernel, _MARK, False):
        return
    setattr(kernel, _MARK, True)
    before, after = kernel.pre_handler_hook, kernel.post_handler_hook

    def pre() -> None:
        before()
        _wrap(stop)

    def post() -> None:
        after()
        _wrap(stop)

    kernel.pre_handler_hook, kernel.post_handler_hook = pre, post
    saved = getattr(kernel, "saved_sigint_handler", None)
    if saved is not None:  # what the kernel puts back when the request running now ends
        kernel.saved_sigint_handler = _wrapped(saved, stop)
    _wrap(stop)


def _wrap(stop: Callable[[], object]) -> None:
    """Wrap the handler set now (main thread only: elsewhere no handler can be set)."""
    try:
        current = signal.getsignal(signal.SIGINT)
        if not getattr(current, _MARK, False):
            signal.signal(signal.SIGINT, _wrapped(current, stop))
    except ValueError:  # not the main thread
        pass


def _wrapped(handler: Any, stop: Callable[[], object]) -> Any:
    if getattr(handler, _MARK, False):
        return handler

    def stopping(signum: int, frame: Any) -> None:
        stop()
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            raise KeyboardInterrupt

    setattr(stopping, _MARK, True)
    return stopping
