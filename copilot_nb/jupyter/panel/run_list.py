"""The panel's list of the agent's runs going on: each run that outlasts its short wait, started
by a panel turn or a `%%copilot` cell of the same kernel, shows above the input with its elapsed
time, the last line it printed and a Stop button of its own.

The panel's Stop ends the turn and leaves runs going (a long run is work the user wanted); this
list is where the user sees them and stops one alone, as `stop_run` does. While a run goes on the
list is sent every `TICK` seconds as one `runs` message (a view that opens later is sent it on its
`ready`); an ended run stays listed, saying how it ended, until the next prompt. What it shows of
the output is masked as the model's copy is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from ...tools.kernel.runs import Run, last_lines, runs_of, state_line
from ...tools.redaction.masking import redact_text
from ..run_view import TICK
from .wire import RunRow, RunsMessage


class RunList:
    """The runs a panel lists, and the task that keeps its views up to date."""

    def __init__(
        self, shell: Any, send: Callable[[RunsMessage], None], *, live: Callable[[], bool]
    ) -> None:
        """`live`: whether the panel is still open (once closed, it stops listening)."""
        self._send = send
        self._live = live
        self._runs: dict[str, Run] = {}
        self._following: asyncio.Task[None] | None = None
        self._closed = False
        self._registry = runs_of(shell)
        self._registry.watchers.append(self.went_on)

    def went_on(self, run: Run, _shell: Any) -> None:
        """A run outlasted its wait (on the kernel's loop): list it and follow it."""
        if not self._live():
            self.close()
        if self._closed:
            return
        self._runs[run.handle] = run
        self.send()
        if self._following is None or self._following.done():
            self._following = asyncio.ensure_future(self._follow())

    def rows(self) -> list[RunRow]:
        return [
            {
                "handle": run.handle,
                "state": state_line(run),
                "tail": redact_text(last_lines(run, 1))[0],
                "running": run.running,
            }
            for run in self._runs.values()
        ]

    def send(self) -> None:
        """The list as it is now, to every view."""
        if not self._closed:
            self._send({"kind": "runs", "runs": self.rows()})

    def replay(self) -> None:
        """A view opened: the list, if it lists anything (an empty list is what a view shows)."""
        if self._runs:
            self.send()

    def stop(self, handle: str) -> None:
        """A view's Stop of one listed run (a handle it does not list is ignored)."""
        run = self._runs.get(handle)
        if run is not None and run.stop("you"):
            self.send()

    def forget_ended(self) -> None:
        """A new prompt: runs that ended leave the list (the model is told of them anyway)."""
        ended = [handle for handle, run in self._runs.items() if not run.running]
        for handle in ended:
            del self._runs[handle]
        if ended:
            self.send()

    def close(self) -> None:
        """The panel closed: stop listening (its runs go on)."""
        self._closed = True
        with contextlib.suppress(ValueError):
            self._registry.watchers.remove(self.went_on)
        if self._following is not None:
            self._following.cancel()

    async def _follow(self) -> None:
        """Send the list every `TICK` while a listed run goes on, and once after the last ends."""
        while going := [run.outcome for run in self._runs.values() if run.running]:
            await asyncio.wait(going, timeout=TICK, return_when=asyncio.FIRST_COMPLETED)
            self.send()
