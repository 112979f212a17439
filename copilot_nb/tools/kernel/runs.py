"""Runs of the agent's code that may outlast the tool call: each runs on the kernel's run thread
and is followed by a handle (`run-3`), so the turn goes on while the kernel computes.

Where the code runs, and why: the turn is a task on the kernel's event loop, on the kernel's
main thread. Code run on that thread blocks the loop (and so the turn) until it ends, which is
what made a long run freeze the agent. So the agent's code runs on one thread of its own, the
run thread (one per kernel, as an ipykernel 7 subshell has one): in the user's namespace, its
printed text and displays routed to the run (`routing.py`); awaited code (top-level `await`)
runs on the kernel's loop as before, its output routed by its task's context. One thread for all
the agent's runs keeps what one run made for its thread (a sqlite connection) usable by the
next; an object the user made for the main thread is not usable there, as in a subshell.

One run at a time: a second run_code or run_cell while one goes on is refused, saying which
run and how to follow it. A run ends by itself, at its timeout, by `stop_run` (the user's own
control), or by the kernel's Interrupt (`interrupts.py`); never by the end of the turn that
started it. Its result is made once, on the kernel's loop, by the tool that started it (run_cell
puts the outputs into the cell then, unless the user edited it meanwhile), and kept until the
model has read it: a run that ends after its turn is told in the next turn's context block.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import itertools
import linecache
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...config import DEFAULT_RUN_WAIT
from ..registry import ToolOutput
from .execute import (
    CodeRun,
    CodeTimeout,
    _compile,
    _raise_in_thread,
    _run_sync,
    compile_error,
    short_traceback,
    shown_once,
)
from .interrupts import stop_runs_on_interrupt
from .routing import Sink, install, routed_to

MAX_WAIT = 600.0
"""Seconds wait_run may wait at most in one call."""
KEEP_ENDED = 20
"""Ended runs kept to be asked about (the most recent)."""
_ATTRIBUTE = "_copilot_nb_runs"
_numbers = itertools.count(1)

Finish = Callable[[CodeRun], Awaitable[ToolOutput]]
"""What the tool that started a run makes of its end: the result the model reads."""


class RunStopped(BaseException):
    """Raised inside a run the user stopped; not an Exception, so `except Exception` lets it by."""


class Run:
    """One run of the agent's code: where it is, what it printed so far, and how it ended."""

    def __init__(self, *, label: str, code: str, timeout: float, loop: Any, finish: Finish):
        self.handle = f"run-{next(_numbers)}"
        self.label = label
        self.code = code
        self.timeout = timeout
        self.started = time.monotonic()
        self.ended_at: float | None = None
        self.sink = Sink()
        self.result: CodeRun | None = None
        self.outcome: asyncio.Future[ToolOutput] = loop.create_future()
        self.reported = False
        """The model has read how it ended."""
        self.stopped_by = ""
        self.cell: str | None = None
        """The id of the notebook cell it runs (run_cell), whose outputs it sets at its end."""
        self._loop = loop
        self._finish = finish
        self._thread: int | None = None
        self._awaiting: concurrent.futures.Future[Any] | None = None

    @property
    def running(self) -> bool:
        return not self.outcome.done()

    def elapsed(self) -> float:
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        return end - self.started

    async def wait(self, seconds: float) -> ToolOutput | None:
        """Its result once it ends, or None if it still runs after `seconds`; waiting is never
        what stops it (a cancelled wait leaves the run going)."""
        done, _ = await asyncio.wait({self.outcome}, timeout=seconds)
        if not done:
            return None
        self.reported = True
        return self.outcome.result()

    def stop(self, why: str) -> bool:
        """Stop it where it is (its next Python line); False when it had already ended."""
        if not self.running or self._thread is None:
            return False
        self.stopped_by = why
        if self._awaiting is not None:
            self._awaiting.cancel()
        _raise_in_thread(self._thread, RunStopped)
        return True

    def execute(self, namespace: dict[str, Any], code: Any, shell: Any | None) -> None:
        """On the run thread: run the code, then hand its end to the loop."""
        self._thread = threading.get_ident()
        with routed_to(self.sink):
            result = self._run(namespace, code, shell)
        self._loop.call_soon_threadsafe(self._ended, result)

    def _run(self, namespace: dict[str, Any], code: str, shell: Any | None) -> CodeRun:
        filename = f"<copilot-{self.handle}>"
        try:
            steps = _compile(code, filename)
        except SyntaxError as exc:
            return compile_error(exc, time.monotonic() - self.started)
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        value: Any = None
        has_value = timed_out = False
        error = ename = evalue = ""
        deadline = self.started + self.timeout
        try:
            for step, is_expression in steps:
                remaining = max(0.0, deadline - time.monotonic())
                if step.co_flags & inspect.CO_COROUTINE:
                    result = self._await(step, namespace, remaining)
                else:
                    result = _run_sync(step, namespace, remaining)
                if is_expression:
                    value, has_value = result, True
            self._flush_figures()
        except CodeTimeout:
            timed_out = True
        except RunStopped:
            error = ename = "Stopped"
            evalue = f"stopped by {self.stopped_by or 'the user'} after {self.elapsed():.1f} s"
            error = f"Stopped: {evalue}; what it did until then stays done"
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            error = short_traceback(exc)
            ename, evalue = type(exc).__name__, str(exc)
        return CodeRun(
            stdout=self.sink.text("stdout"),
            stderr=self.sink.text("stderr"),
            value=value,
            has_value=has_value and value is not None,
            error=error,
            timed_out=timed_out,
            seconds=time.monotonic() - self.started,
            ename=ename,
            evalue=evalue,
            displays=tuple(shown_once(self.sink.displays, self._displayed)),
        )

    _displayed: int | None = None

    def _flush_figures(self) -> None:
        """The figures the inline backend would show at a cell's end, as the run's displays."""
        self._displayed = len(self.sink.displays)
        backend = sys.modules.get("matplotlib_inline.backend_inline")
        if backend is not None:
            with contextlib.suppress(Exception):  # as a cell's end does: a bad figure is no failure
                backend.flush_figures()

    def _await(self, step: Any, namespace: dict[str, Any], timeout: float) -> Any:
        """Awaited code runs on the kernel's loop (its objects are bound to it); this thread
        waits for it, and cancels it at the deadline."""
        sink = self.sink

        async def awaited() -> Any:
            with routed_to(sink):
                return await eval(step, namespace)

        future = asyncio.run_coroutine_threadsafe(awaited(), self._loop)
        self._awaiting = future
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise CodeTimeout from None
        except concurrent.futures.CancelledError:
            raise RunStopped from None
        finally:
            self._awaiting = None

    def _ended(self, result: CodeRun) -> None:
        """On the loop: the run is over; its result is made once, kept until read."""
        self.result = result
        self.ended_at = time.monotonic()
        task = asyncio.ensure_future(self._finish(result))
        task.add_done_callback(self._settle)

    def _settle(self, task: asyncio.Future[ToolOutput]) -> None:
        if task.cancelled():
            self.outcome.set_result(ToolOutput(content="its result was lost", is_error=True))
        elif task.exception() is not None:
            self.outcome.set_exception(task.exception())  # type: ignore[arg-type]
        else:
            self.outcome.set_result(task.result())


class Runs:
    """One kernel's runs: the run thread, the run going on (at most one), the recent ones."""

    def __init__(self) -> None:
        self.wait_seconds = DEFAULT_RUN_WAIT
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="copilot-run")
        self._runs: dict[str, Run] = {}
        self.watchers: list[Callable[[Run, Any], None]] = []
        """Called with each run that goes on past its wait, and the shell (a view shows it)."""

    def went_on(self, run: Run, shell: Any | None) -> None:
        """The run outlasted its wait: its watchers show it."""
        for watcher in list(self.watchers):  # a closed panel removes itself
            watcher(run, shell)

    def running(self) -> Run | None:
        return next((run for run in self._runs.values() if run.running), None)

    def get(self, handle: str) -> Run | None:
        return self._runs.get(handle.strip())

    def all(self) -> list[Run]:
        return list(self._runs.values())

    def unreported(self) -> list[Run]:
        """Runs that ended without the model reading how."""
        return [run for run in self._runs.values() if not run.running and not run.reported]

    def start(
        self,
        namespace: dict[str, Any],
        code: str,
        *,
        label: str,
        timeout: float,
        shell: Any | None,
        finish: Finish,
    ) -> Run:
        """Start `code` on the run thread (the caller checked no run goes on)."""
        install(shell)
        stop_runs_on_interrupt(shell, self.interrupted)
        run = Run(
            label=label,
            code=code,
            timeout=timeout,
            loop=asyncio.get_running_loop(),
            finish=finish,
        )
        self._runs[run.handle] = run
        self._forget_old()
        self._thread.submit(run.execute, namespace, code, shell)
        return run

    def interrupted(self) -> None:
        """The kernel was interrupted: the run going on stops too."""
        going = self.running()
        if going is not None:
            going.stop("the kernel's interrupt")

    def _forget_old(self) -> None:
        ended = [handle for handle, run in self._runs.items() if not run.running and run.reported]
        for handle in ended[: max(0, len(ended) - KEEP_ENDED)]:
            del self._runs[handle]


_WITHOUT_SHELL: list[Runs] = []


def runs_of(shell: Any | None) -> Runs:
    """The kernel's runs (one registry per shell; code without a shell shares one)."""
    if shell is None:
        if not _WITHOUT_SHELL:
            _WITHOUT_SHELL.append(Runs())
        return _WITHOUT_SHELL[0]
    found = getattr(shell, _ATTRIBUTE, None)
    if not isinstance(found, Runs):
        found = Runs()
        setattr(shell, _ATTRIBUTE, found)
    return found


def output_so_far(run: Run, limit: int = 2000) -> str:
    """The tail of what the run printed so far (the end is what a reader of a long run wants)."""
    parts = []
    for name in ("stdout", "stderr"):
        text = run.sink.text(name)
        if text:
            cut = text[-limit:]
            more = f"(… {len(text) - limit:,} earlier characters)\n" if len(text) > limit else ""
            parts.append(f"{name} so far:\n{more}{cut.rstrip()}")
    if run.sink.displays:
        parts.append(f"{len(run.sink.displays)} displays so far")
    return "\n".join(parts) or "(no output yet)"


def last_lines(run: Run, count: int) -> str:
    """The last `count` lines the run printed (its stdout, then its stderr), as they are: a view
    masks them as the model's copy is."""
    printed = "\n".join(t for t in (run.sink.text("stdout"), run.sink.text("stderr")) if t)
    return "\n".join(printed.rstrip("\n").splitlines()[-count:])


def state_line(run: Run) -> str:
    """Where the run is, in one line: running and for how long, or how it ended."""
    head = f"{run.handle} ({run.label})"
    if run.running:
        return f"▶ {head} running · {run.elapsed():.0f} s"
    if run.stopped_by:
        return f"■ {head} stopped by {run.stopped_by} after {run.elapsed():.0f} s"
    failed = run.result is not None and (run.result.error or run.result.timed_out)
    return f"{'✗' if failed else '✓'} {head} ended after {run.elapsed():.0f} s"
