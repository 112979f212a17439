"""Following a run that outlasted its tool call: wait for it, look at it, stop it, by handle.

run_code and run_cell start their code with `follow`: it waits a few seconds (`Runs.wait_seconds`)
and returns the run's result as before, or, if it still runs, its handle, how long it has run and
the tail of its output, while the run goes on (`runs.py`). These three tools take it from there.
What they show of a run's output is masked as run_code's result is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import replace

from ...errors import ToolError
from ...text import shorten
from ..context import ToolContext
from ..redaction.masking import redact_text
from ..registry import Tool, ToolOutput, bound_tool
from .runs import MAX_WAIT, Finish, Run, Runs, output_so_far, runs_of

_TO_THE_END: ContextVar[bool] = ContextVar("copilot_nb_runs_to_the_end", default=False)
_ON_START: ContextVar[Callable[[Run], None] | None] = ContextVar(
    "copilot_nb_runs_on_start", default=None
)


def run_tools(ctx: ToolContext) -> list[Tool]:
    """wait_run, run_status and stop_run over the kernel's runs: listed once called or found,
    as a run's own result names them (most turns start no run that outlasts its wait, so their
    schemas are not paid on every request)."""
    return [
        bound_tool(wait_run, ctx, timeout_argument="timeout", on_request=True),
        bound_tool(run_status, ctx, on_request=True),
        bound_tool(stop_run, ctx, on_request=True),
    ]


@contextlib.contextmanager
def to_the_end() -> Iterator[None]:
    """Runs started here are waited for to their end (a rebuild runs its steps in order)."""
    token = _TO_THE_END.set(True)
    try:
        yield
    finally:
        _TO_THE_END.reset(token)


@contextlib.contextmanager
def told_of_runs(started: Callable[[Run], None]) -> Iterator[None]:
    """Runs started here are told to `started` as they start (the MCP endpoint follows a
    run as a task, by the handle the tool's result would only name after its wait)."""
    token = _ON_START.set(started)
    try:
        yield
    finally:
        _ON_START.reset(token)


def refuse_if_busy(ctx: ToolContext, tool: str) -> Runs:
    """The kernel's runs, if none goes on; else the error the model reads (two runs would race
    over the same variables)."""
    runs = runs_of(ctx.shell)
    going = runs.running()
    if going is not None:
        raise ToolError(
            f"{tool}: {going.handle} ({going.label}) has been running for "
            f"{going.elapsed():.0f} s, and one run goes at a time so they never race over the "
            f'same variables; call wait_run("{going.handle}") first, or stop_run("'
            f'{going.handle}") if it is no longer needed'
        )
    return runs


def refuse_if_running_cell(ctx: ToolContext, cell_id: str, tool: str) -> None:
    """The error the model reads when it would change the cell a run is running: the run's
    outputs go into that cell when it ends, so the two would race."""
    going = runs_of(ctx.shell).running()
    if going is not None and going.cell == cell_id:
        raise ToolError(
            f"{tool}: cell {cell_id} is running as {going.handle} ({going.elapsed():.0f} s so "
            f'far), and its outputs go into it when it ends; call wait_run("{going.handle}") '
            "first, then change it"
        )


async def follow(
    ctx: ToolContext,
    runs: Runs,
    code: str,
    *,
    label: str,
    timeout: float,
    finish: Finish,
    cell: str | None = None,
    on_going: Callable[[Run], None] | None = None,
) -> ToolOutput:
    """Start the code and wait a little: its result if it ends by then, else its handle
    (`on_going` is told, and the kernel's watchers, so the run shows where the user looks)."""
    run = runs.start(
        ctx.namespace(), code, label=label, timeout=timeout, shell=ctx.shell, finish=finish
    )
    run.cell = cell
    started = _ON_START.get()
    if started is not None:
        started(run)
    done = await run.wait(timeout + 60 if _TO_THE_END.get() else runs.wait_seconds)
    if done is not None:
        return done
    runs.went_on(run, ctx.shell)
    if on_going is not None:
        on_going(run)
    return still_running(run)


def still_running(run: Run) -> ToolOutput:
    """A run going on: its handle, how long it has run, its output so far, what to do next."""
    handle = run.handle
    head = (
        f"{handle} ({run.label}) is still running after {run.elapsed():.0f} s (its timeout "
        f"is {run.timeout:g} s). It goes on in the kernel while you work: read files, edit other "
        f'cells or answer the user; wait_run("{handle}") returns its result, run_status('
        f'"{handle}") its output so far, stop_run("{handle}") stops it. No other code runs '
        "until it ends."
    )
    content = redact_text(f"{head}\n{output_so_far(run)}")[0]
    return ToolOutput(content=content, summary=f"{handle} running, {run.elapsed():.0f} s")


async def wait_run(ctx: ToolContext, handle: str, timeout: float = 60) -> ToolOutput:
    """Wait for a run that run_code or run_cell left running, and return its result (what it
    printed, returned or raised) once it ends. Past the timeout it returns the run's output so
    far and the run goes on.

    Args:
        handle: The run's handle, as run_code or run_cell returned it ("run-3").
        timeout: Seconds to wait at most (at most 600).
    """
    if not 0 < timeout <= MAX_WAIT:
        raise ToolError(
            f"wait_run: timeout must be more than 0 and at most {MAX_WAIT:g} seconds, "
            f"not {timeout:g}"
        )
    run = _run(ctx, handle, "wait_run")
    done = await run.wait(timeout)
    return ended(run, done) if done is not None else still_running(run)


def ended(run: Run, done: ToolOutput) -> ToolOutput:
    """A run's result as a follow-up returns it: its line says which run ended, and when."""
    if done.is_error:
        return done
    return replace(done, summary=f"{run.handle} ended after {run.elapsed():.0f} s")


async def run_status(ctx: ToolContext, handle: str = "") -> ToolOutput:
    """Show a run's state and its output so far without waiting; with no handle, list the
    kernel's recent runs.

    Args:
        handle: The run's handle ("run-3"); empty lists them all.
    """
    if not handle.strip():
        runs = runs_of(ctx.shell).all()
        if not runs:
            return ToolOutput(content="no runs in this kernel yet", summary="no runs")
        lines = [_line(run) for run in runs]
        return ToolOutput(content="\n".join(lines), summary=f"{len(runs)} runs")
    run = _run(ctx, handle, "run_status")
    if run.running:
        return still_running(run)
    done = await run.wait(0)
    assert done is not None
    return ended(run, done)


async def stop_run(ctx: ToolContext, handle: str) -> ToolOutput:
    """Stop a run that run_code or run_cell left running (at its next line of Python; a call
    blocked in C stops when it returns). What it did until then stays done.

    Args:
        handle: The run's handle ("run-3").
    """
    run = _run(ctx, handle, "stop_run")
    if not run.stop("the agent"):
        return ToolOutput(content=f"{run.handle} had already ended", summary="already ended")
    done = await run.wait(5)
    if done is None:
        return ToolOutput(
            content=f"{run.handle} was asked to stop; it is in a call that has not returned yet "
            "and stops when it does",
            summary="stopping",
        )
    return done


def _run(ctx: ToolContext, handle: str, tool: str) -> Run:
    runs = runs_of(ctx.shell)
    run = runs.get(handle)
    if run is None:
        known = ", ".join(r.handle for r in runs.all()) or "none yet"
        raise ToolError(
            f"{tool}: no run {handle!r} in this kernel (its runs: {known}); run_status() lists them"
        )
    return run


def _line(run: Run) -> str:
    state = "running" if run.running else ("stopped" if run.stopped_by else "ended")
    return f"{run.handle}: {run.label}, {state}, {run.elapsed():.1f} s"


def runs_note(runs: Runs, share: int) -> str:
    """For the next request's context block: runs that ended unread (each with its result, cut
    to fit) and runs still going; '' when there are none. Those told are read."""
    ended, going = runs.unreported(), runs.running()
    if not ended and going is None:
        return ""
    lines = []
    if going is not None:
        lines.append(
            f"{going.handle} ({going.label}) is still running, for {going.elapsed():.0f} s so "
            f'far; wait_run("{going.handle}") returns its result.'
        )
    each = max(200, (share - 200) // max(1, len(ended)))
    for run in ended:
        run.reported = True
        said = run.outcome.exception() or run.outcome.result().content
        how = "stopped" if run.stopped_by else "ended"
        text = shorten(str(said), each)
        lines.append(f"{run.handle} ({run.label}) {how} after {run.elapsed():.0f} s:\n{text}")
    head = "Runs of your code that went on after their tool call returned:"
    return redact_text("\n".join([head, *lines]))[0]
