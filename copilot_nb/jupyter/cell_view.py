"""Agent events rendered as one live HTML output: streamed text, a line per tool call, diffs.

The transcript is updated in place through a display handle, and always once more at the end,
so the final output is complete. It never prints: it only updates its own display. Each update
resends the whole output (a front end re-renders all of it), so updates thin out as the answer
grows: the first words show at once, then an update waits until the answer has grown by an
eighth of what is shown (the bytes sent stay a small multiple of the answer's, whatever its
pace) or some seconds have passed (a slow model's words still show), and never comes sooner
than `UPDATE_INTERVAL` after the last. Where the page that ran the cell has copilot_nb's
extension, updates send only what is new instead (`cell_growth.py`), as soon as there is enough
of it to be worth a message (`PAGE_GROWTH`) or after `PAGE_STALE`.

The output is HTML built by `safe_html` (with plain text alongside), never Markdown: a front end
renders a just-run cell's Markdown with its raw HTML, and the model's text must never run.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from typing import Any

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover
    from typing_extensions import assert_never

from ..agent.conversations.ledger import Ledger
from ..agent.conversations.usage import Tally, tokens_line
from ..agent.session import TurnEvent, TurnNote
from ..events import (
    ApprovalNeeded,
    CellChanged,
    Done,
    Failed,
    FileChanged,
    Notice,
    Question,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    ToolsUpdated,
    UsageReported,
    revision,
)
from ..kernel_bridge import signals_heard
from .approval_prompt import question
from .cell_growth import PageGrowth, page_for_request
from .cell_transcript import Prose, Reasoning, ToolLine, Transcript

UPDATE_INTERVAL = 0.25
"""Seconds at least between display updates while streaming: smooth to the eye."""
GROWTH = 8
"""An update is due once the answer has grown by 1/GROWTH of what the output shows."""
STALE, STALE_PACE = 2.0, 2_000
"""Seconds after which an update is due however little the answer grew: `STALE`, and one more
for every `STALE_PACE` characters shown, so a long answer from a slow model is not resent whole
every few seconds (its bytes grow as n log n at a steady pace, not as n squared)."""
PAGE_GROWTH, PAGE_STALE = 200, 1.0
"""A growth in the page is due once the answer grew by this many characters (a message's
envelope is about 550 bytes) or after this many seconds."""
STOPPED = "■ Stopped"
"""The last line of a turn the user stopped (a kernel interrupt), as the panel's Stop ends one."""
ASKING = "waiting for your approval below"
"""A tool line while its approval is asked, under the line."""


class CellRenderer:
    """Feeds agent events into a Transcript and keeps one display output in step with it."""

    def __init__(
        self,
        *,
        display: Callable[..., Any] | None = None,
        interval: float = UPDATE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        cost: Callable[[Mapping[str, int]], float | None] | None = None,
        page: PageGrowth | None = None,
        usage: Ledger | None = None,
    ) -> None:
        """`cost`: dollars for the turn's tokens, None where no price is known. `page`: where
        the output grows in the page instead (`cell_growth.py`); with IPython's own display,
        the page that sent the request, if it can. `usage`: the session's count of the
        conversation (`CopilotSession.saved.usage`), which the session feeds; without one the
        renderer counts this turn alone."""
        self._cost = cost
        self._usage = usage if usage is not None else Ledger()
        self._counts = usage is None
        if display is None:
            from IPython import get_ipython
            from IPython.display import display as ipython_display

            display = ipython_display
            page = page if page is not None else page_for_request(get_ipython())
        self._page = page
        self.transcript = Transcript()
        self._interval = interval
        self._clock = clock
        self._last = -float("inf")  # the first words show at once
        self._shown = 0
        """Characters of the transcript the last update showed."""
        self._grown = 0
        """Characters of text added since the last update."""
        self._dirty = False
        self._finished = False
        self._tools: dict[str, ToolLine] = {}
        self._current: ToolLine | None = None
        self._waiting: Prose | None = None
        """The notice of a retry's wait, shown until the request goes on."""
        self.turn = Tally()
        """The turn's tokens, as the conversation's count has them (`usage.py`)."""
        self.conversation = Tally()
        """The conversation's tokens with this turn's, for the footer."""
        self.error = ""
        """The error the turn ended in, if it failed (the cell itself still runs to the end)."""
        first = self.transcript.rendered()
        if page is None:
            self._handle = display(first, display_id=True)
        else:
            self._handle = display(first, display_id=True, metadata=page.metadata)
            page.shown(first.html)

    def notice(self, text: str) -> None:
        self.transcript.footer.append(text)
        self._dirty = True

    def handle(self, event: TurnEvent) -> None:
        """Apply one event; refresh the display if enough time has passed (at once for a
        question, so it shows above the approval prompt, and for a tool's start and end, which
        the model's next reply may keep waiting for a long time)."""
        self._apply(event)
        self._dirty = True
        at_once = isinstance(event, (ApprovalNeeded, ToolStarted, ToolFinished, ToolsUpdated))
        at_once = at_once or (isinstance(event, Notice) and event.retry)
        streamed = isinstance(event, (TextDelta, ReasoningDelta))
        if isinstance(event, (TextDelta, ReasoningDelta)):
            self._grown += len(event.text)
        if at_once or self._due(streamed):
            self.flush()

    def _due(self, streamed: bool) -> bool:
        """Whether to update now: not sooner than the interval; streamed text once it grew
        enough or has waited long (see the module's docstring)."""
        elapsed = self._clock() - self._last
        if elapsed < self._interval:
            return False
        if not streamed:
            return True
        if self._page is not None:  # a growth costs what is new, and its message's envelope
            return elapsed >= PAGE_STALE or self._grown >= PAGE_GROWTH
        stale = STALE + self._shown / STALE_PACE
        return elapsed >= stale or self._grown * GROWTH >= self._shown

    def _apply(self, event: TurnEvent) -> None:  # noqa: C901, PLR0912 - one branch per event type a cell shows, in one place
        blocks = self.transcript.blocks
        if self._waiting is not None:  # the wait is over, or another one replaces it
            blocks[:] = [b for b in blocks if b is not self._waiting]
            self._waiting = None
        match event:
            case TextDelta(text=text):
                if blocks and isinstance(blocks[-1], str):
                    blocks[-1] += text
                else:
                    blocks.append(text)
            case ReasoningDelta(text=text):
                if blocks and isinstance(blocks[-1], Reasoning):
                    blocks[-1].text += text
                else:
                    blocks.append(Reasoning(text))
            case ToolStarted(call_id=call_id, name=name, summary=summary, parent=parent):
                shown = f"↳ {name}" if parent else name  # a subagent's call, under its parent
                self._current = self._tools[call_id] = ToolLine(name=shown, target=summary)
                blocks.append(self._current)
            case ApprovalNeeded(call_id=call_id, category=category):
                waiting = self._tools.get(call_id)
                if waiting is None and category == "plan":  # the plan is the answer above
                    waiting = self._tools[call_id] = ToolLine(name="plan", target="")
                    blocks.append(waiting)
                if waiting is not None:
                    waiting.outcome = question(event) if category == "plan" else ASKING
                    if not isinstance(event, Question):
                        self._on_answer(event, waiting)
            case FileChanged(diff=diff) | CellChanged(diff=diff):
                if self._current is not None:
                    self._current.diffs.append(diff)
            case ToolFinished(call_id=call_id, name=name, ok=ok, summary=summary):
                line = self._tools.get(call_id) or ToolLine(name=name, target="")
                line.ok, line.outcome, line.outputs = ok, summary, event.outputs
            case UsageReported():
                if self._counts:
                    self._usage.observe(event)
                self.turn, self.conversation = self._usage.turn, self._usage.total
            case Notice(text=text, retry=True):
                while blocks and isinstance(blocks[-1], (str, Reasoning)):
                    blocks.pop()  # the failed attempt's text: the retry streams it again
                self._waiting = Prose(text, "⚠")
                blocks.append(self._waiting)
            case Notice(text=text):
                blocks.append(Prose(text, "⚠"))
            case ToolsUpdated() as update:
                blocks.append(Prose(update.text, "↻"))
            case TurnNote(text=text):
                self.transcript.footer.append(text)
            case Done():
                if self.turn.requests:
                    dollars = self._cost(self.turn.tokens) if self._cost is not None else None
                    self.notice(tokens_line(self.turn, self.conversation, dollars))
            case Failed(error=error):
                self.error = error
                blocks.append(Prose(error, "Error:"))
            case _:
                assert_never(event)

    def _on_answer(self, request: ApprovalNeeded, line: ToolLine) -> None:
        """Once answered, the line that asked says the outcome, where the question was (the
        buttons below go away): above the footer, whatever the turn adds later."""

        def answered(decision: asyncio.Future[tuple[bool, str]]) -> None:
            if decision.cancelled() or line.ok is not None:
                return  # the call finished first (denied at once, headless): its outcome says why
            approved, reason = decision.result()
            changes = revision(reason)
            if changes is not None:
                line.outcome = f"revising: {changes}"
            else:
                line.outcome = "approved" if approved else "denied"
            if request.category == "plan" and changes is None:
                line.ok = approved
            self._dirty = True
            self.flush()

        request.decision.add_done_callback(answered)

    def provenance(self) -> dict[str, Any]:
        """What this output came from, as far as the events say: the tool calls, the tokens and,
        for a turn that failed, its error (so a reader of the notebook, or the evaluation, can
        tell a failed turn from an answer)."""
        calls = [
            {"tool": line.name, "target": line.target, "ok": line.ok}
            for line in self._tools.values()
        ]
        turn = self.turn
        usage: dict[str, int] | None = None  # no request counted: unknown, never a count of 0
        if turn.requests:
            usage = {
                "input_tokens": turn.input,
                "output_tokens": turn.output,
                "cached_tokens": turn.cached,
            }
            if turn.estimated:  # requests whose server sent no usage: our estimate
                usage["estimated"] = turn.estimated
        failed = {"error": self.error} if self.error else {}
        return {"tool_calls": calls, "usage": usage, **failed}

    def finish(self, record: dict[str, Any]) -> None:
        """The last update: the transcript, with its provenance in the output's metadata
        (`metadata.copilot_nb`: model, provider, tool calls, tokens, cassette entries)."""
        self._handle.update(
            self.transcript.rendered(), metadata={"copilot_nb": {**record, **self.provenance()}}
        )
        self._dirty = False
        self._finished = True

    def flush(self) -> None:
        """Send the current transcript to the display, if it changed and the turn has not
        finished: a question the turn's end denied answers after `finish`, and an update then
        would drop the output's provenance."""
        if self._dirty and not self._finished:
            rendered = self.transcript.rendered()
            if self._page is not None:
                self._page.grow(rendered.html)
            else:
                self._handle.update(rendered)
            self._dirty = False
            self._shown, self._grown = len(rendered.text), 0
        self._last = self._clock()


async def render_turn(
    events: AsyncGenerator[TurnEvent, None], renderer: CellRenderer | None = None
) -> bool:
    """Show a session turn in the cell's output; whether the user stopped it. An interrupt stops
    the turn as the panel's Stop does: the partial answer stays, one line says it stopped, and
    no traceback follows (the conversation has already kept what was said, marked as
    interrupted)."""
    renderer = renderer if renderer is not None else CellRenderer()
    try:
        with signals_heard():
            async with aclosing(events) as stream:
                async for event in stream:
                    renderer.handle(event)
    except (asyncio.CancelledError, KeyboardInterrupt):
        renderer.notice(STOPPED)
        uncancel()
        return True
    finally:
        renderer.flush()
    return False


def uncancel() -> None:
    """Take back the interrupt's cancellation of the cell's task once the turn has stopped, so
    what the cell does next (its provenance, the kernel's reply) is not cancelled too."""
    task = asyncio.current_task()
    if task is not None and sys.version_info >= (3, 11):
        while task.cancelling():
            task.uncancel()
