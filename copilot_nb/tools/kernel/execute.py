"""Run a piece of code in the user's namespace, as a cell would, with its output captured.

IPython's `run_cell` cannot be re-entered from inside a running cell, so the code is compiled and
executed here, with top-level `await` allowed; the value of a last expression is returned as a
cell's `Out` would be.

Where it runs, and how a timeout stops it (chosen so that the code sees exactly what a cell sees):

- Synchronous code runs on the calling thread, the kernel's event-loop thread, like a cell. So it
  never races the kernel or the user's next cell, and objects bound to their thread (sqlite
  connections, GUI handles) work. A watchdog thread raises a timeout *inside* it when time is up
  (`PyThreadState_SetAsyncExc`), which stops any Python-level loop. Not stopped: a call blocked in C
  (`time.sleep`, a socket read, one long numpy operation) until it returns to Python, and code that
  catches BaseException with a bare `except:`. The kernel's Interrupt stops both at once.
- Code with top-level `await` runs as a task on the loop and is cancelled when time is up.
  A synchronous loop *inside* such code blocks the loop and cannot be stopped that way.

What ran before a timeout stays done: names it assigned remain in the namespace.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import itertools
import linecache
import os
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ..views.outputs import last_lines, strip_ansi

MAX_TRACEBACK_LINES = 30
"""Lines of a traceback kept (the last ones)."""

_run_numbers = itertools.count(1)
_OWN_FRAMES = {__file__, os.path.join(os.path.dirname(__file__), "runs.py")}
"""Where the frames that run the code are: a traceback starts below them."""


class CodeTimeout(BaseException):
    """Raised inside code that ran past its timeout; not an Exception, so `except Exception` in
    the user's code does not swallow it."""


@dataclass(frozen=True, kw_only=True)
class CodeRun:
    """What running a piece of code produced."""

    stdout: str = ""
    stderr: str = ""
    value: Any = None
    """The value of the code's last expression (None when it has none)."""
    has_value: bool = False
    error: str = ""
    """`ValueError: bad` and a short traceback, without ANSI codes; "" when it succeeded."""
    ename: str = ""
    evalue: str = ""
    """The exception's type name and message, when it failed."""
    timed_out: bool = False
    seconds: float = 0.0
    displays: tuple[dict[str, Any], ...] = ()
    """What it passed to `display()` (figures included), when run with the shell's displays
    captured: each `{"data": {...}, "metadata": {...}}`."""


async def run_code_in(
    namespace: dict[str, Any], code: str, *, timeout: float, shell: Any | None = None
) -> CodeRun:
    """Run `code` in `namespace` for at most about `timeout` seconds; see the module docstring.

    With `shell`, what the code displays (and figures the inline backend would show at the end
    of a cell) is captured into `displays` instead of going to the cell running the agent."""
    started = time.monotonic()
    filename = f"<copilot-run-{next(_run_numbers)}>"
    try:
        steps = _compile(code, filename)
    except SyntaxError as exc:
        return compile_error(exc, time.monotonic() - started)
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    out, err = io.StringIO(), io.StringIO()
    value: Any = None
    has_value = timed_out = False
    error = ename = evalue = ""
    deadline = started + timeout
    displays: list[dict[str, Any]] = []
    with redirect_stdout(out), redirect_stderr(err), _captured_displays(shell, displays):
        try:
            for step, is_expression in steps:
                remaining = max(0.0, deadline - time.monotonic())
                if step.co_flags & inspect.CO_COROUTINE:
                    result = await _run_async(eval(step, namespace), remaining)
                else:
                    result = _run_sync(step, namespace, remaining)
                if is_expression:
                    value, has_value = result, True
        except CodeTimeout:
            timed_out = True
        except (Exception, SystemExit) as exc:
            error = short_traceback(exc)
            ename, evalue = type(exc).__name__, str(exc)
    return CodeRun(
        stdout=out.getvalue(),
        stderr=err.getvalue(),
        value=value,
        has_value=has_value and value is not None,
        error=error,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
        ename=ename,
        evalue=evalue,
        displays=tuple(displays),
    )


def compile_error(exc: SyntaxError, seconds: float) -> CodeRun:
    """A run of code that does not compile: its error, with the line."""
    where = f" (line {exc.lineno})" if exc.lineno else ""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    text = f"{type(exc).__name__}: {exc.msg}{where}\n{detail}"
    return CodeRun(error=text, seconds=seconds)


@contextlib.contextmanager
def _captured_displays(shell: Any | None, into: list[dict[str, Any]]) -> Iterator[None]:
    """Collect `display()` calls, and the figures the inline backend shows at a cell's end."""
    if shell is None or not hasattr(shell, "display_pub"):
        yield
        return
    from IPython.core.displaypub import CapturingDisplayPublisher

    own, capture = shell.display_pub, CapturingDisplayPublisher()
    shell.display_pub = capture
    displayed: int | None = None
    try:
        yield
        displayed = len(capture.outputs)
        backend = sys.modules.get("matplotlib_inline.backend_inline")
        if backend is not None:
            with contextlib.suppress(Exception):
                backend.flush_figures()
    finally:
        shell.display_pub = own
        into.extend(shown_once(capture.outputs, displayed))


def shown_once(published: list[dict[str, Any]], displayed: int | None) -> list[dict[str, Any]]:
    """The displays, without the figures the end-of-run flush showed again: `display(fig)`
    shows a figure, and the inline backend shows every figure drawn at the end (a notebook cell
    shows it twice). Only the flush's repeats go (`displayed`: how many came before it)."""
    outputs = [
        {"data": shown.get("data") or {}, "metadata": shown.get("metadata") or {}}
        for shown in published
    ]
    kept = outputs[:displayed] if displayed is not None else outputs
    for flushed in outputs[len(kept) :]:
        if all(flushed["data"] != earlier["data"] for earlier in kept):
            kept.append(flushed)
    return kept


def _compile(code: str, filename: str) -> list[tuple[CodeType, bool]]:
    """The statements, then the last expression on its own so its value can be returned."""
    tree = ast.parse(code, filename, "exec")
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = tree.body
    last = body[-1] if body and isinstance(body[-1], ast.Expr) else None
    head = body[:-1] if last is not None else body
    steps = []
    if head:
        module = ast.Module(body=head, type_ignores=[])
        steps.append((compile(module, filename, "exec", flags=flags, dont_inherit=True), False))
    if last is not None:
        expression = ast.Expression(body=last.value)
        steps.append((compile(expression, filename, "eval", flags=flags, dont_inherit=True), True))
    return steps


async def _run_async(awaitable: Awaitable[Any], timeout: float) -> Any:
    """Await the code as a task; cancel it at the deadline (or when this run is cancelled)."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    finally:
        if not task.done():
            task.cancel()
    if not done:
        with contextlib.suppress(
            BaseException
        ):  # its CancelledError, or what it raised on the way out
            await task
        raise CodeTimeout
    return task.result()


def _run_sync(step: CodeType, namespace: dict[str, Any], timeout: float) -> Any:
    """Run on this thread, with a watchdog that raises CodeTimeout in it at the deadline."""
    target = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = _raise_in_thread(target, CodeTimeout)

    watchdog = threading.Timer(timeout, fire)
    watchdog.daemon = True
    watchdog.start()
    try:
        return eval(step, namespace)
    finally:
        watchdog.cancel()
        with lock:
            state["done"] = True
            if state["fired"]:
                _raise_in_thread(target, None)  # withdraw it, if it has not been raised yet


def _raise_in_thread(thread_id: int, exception: type[BaseException] | None) -> bool:
    """Ask CPython to raise `exception` in a thread at its next bytecode (None withdraws it)."""
    try:
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):  # not CPython: the code runs to its end
        return False
    argument = ctypes.py_object(exception) if exception is not None else None
    return bool(set_async_exc(ctypes.c_ulong(thread_id), argument))


def short_traceback(exc: BaseException) -> str:
    """`ZeroDivisionError: division by zero` and the traceback below this module's frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in _OWN_FRAMES:
        tb = tb.tb_next
    lines = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip().splitlines()
    lines = last_lines(lines, MAX_TRACEBACK_LINES)
    head = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return strip_ansi("\n".join([head, *lines]))


def ran_for(seconds: float) -> str:
    """`ok`, or `ok in 3.2 s` for a run that took a second or more: how a run's line reads
    (a few hundredths of a second say nothing, and would differ on every run)."""
    return f"ok in {seconds:.1f} s" if seconds >= 1 else "ok"
