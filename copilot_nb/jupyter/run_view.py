"""A run that goes on after its tool call returned, shown in the `%%copilot` cell that started
it: its elapsed time and the tail of its output, live, and a Stop button of its own.

The turn's Stop (or the end of the turn) leaves the run going; this button stops the run alone,
as `stop_run` does. The view is made only for a run that outlasts its short wait (a short run
shows as before, under its tool line) and only in a cell; the panel lists every run going on
(`panel/run_list.py`). Where the page draws widgets it is an ipywidgets box (the button's click is a comm
message, heard while the kernel is idle or busy with the user's next cell); elsewhere a display
updated in place, without a button. When the run ends, the view says how, whenever that is.
What it shows of the output is masked as the model's copy is.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..tools.kernel.runs import Run, last_lines, runs_of, state_line
from ..tools.redaction.masking import redact_text
from .approval_prompt import from_notebook, widgets_installed
from .safe_html import escape

TICK = 1.0
"""Seconds between updates of a view while its run goes on."""
TAIL_LINES = 12
"""Lines of the run's output a view shows (the last ones)."""
STOP = "Stop run"
_CLASS = "copilot-nb-run"
_FOLLOWING: set[asyncio.Future[None]] = set()
"""The views being updated (a task nobody holds may be collected mid-way)."""


def watch_runs(shell: Any) -> None:
    """From now on, each run that goes on in the background shows itself in its cell."""
    runs = runs_of(shell)
    if show_run not in runs.watchers:
        runs.watchers.append(show_run)


def show_run(run: Run, shell: Any) -> None:
    """Show the run where the request that started it runs: a cell (none for the panel's)."""
    kernel = getattr(shell, "kernel", None)
    parent = kernel.get_parent() if kernel is not None else None
    header = (parent or {}).get("header") or {}
    if header.get("msg_type") != "execute_request":
        return
    if widgets_installed() and from_notebook(kernel):
        view: RunView = WidgetRunView(run)
    else:
        view = DisplayRunView(run)
    task = asyncio.ensure_future(view.follow())
    _FOLLOWING.add(task)
    task.add_done_callback(_FOLLOWING.discard)


class RunView:
    """What a run looks like while it goes on and once it ended."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def html(self) -> str:
        printed = tail(self.run)
        body = f"<pre class='{_CLASS}-output'>{escape(printed)}</pre>" if printed else ""
        head = f"<div class='{_CLASS}-state'>{escape(state_line(self.run))}</div>"
        return f"<div class='{_CLASS}'>{head}{body}</div>"

    def text(self) -> str:
        return "\n".join(filter(None, [state_line(self.run), tail(self.run)]))

    async def follow(self) -> None:
        """Update the view every `TICK` seconds until the run ends, then once more."""
        self.show()
        while self.run.running:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.run.outcome), TICK)
            self.update()
        self.update()

    def show(self) -> None:
        raise NotImplementedError

    def update(self) -> None:
        raise NotImplementedError


class WidgetRunView(RunView):
    """The view as widgets: the state and output, and the run's own Stop button."""

    def show(self) -> None:
        import ipywidgets
        from IPython.display import display

        self.output = ipywidgets.HTML(self.html())
        self.button = ipywidgets.Button(
            description=STOP, button_style="danger", tooltip=f"Stop {self.run.handle} alone"
        )
        self.button.on_click(lambda _: self.run.stop("you"))
        self.box = ipywidgets.VBox([self.output, self.button])
        self.box.add_class(_CLASS)
        display(self.box)

    def update(self) -> None:
        self.output.value = self.html()
        if not self.run.running:
            self.box.children = (self.output,)


class DisplayRunView(RunView):
    """The view as a display updated in place (no widgets here, so no button)."""

    def show(self) -> None:
        from IPython.display import display

        self.handle = display(self._bundle(), raw=True, display_id=True)

    def update(self) -> None:
        self.handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.text()}


def tail(run: Run) -> str:
    """The last lines the run printed, masked as the model reads them."""
    return redact_text(last_lines(run, TAIL_LINES))[0]
