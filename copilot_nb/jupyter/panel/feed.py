"""What the chat panel sends its front end: agent events as small ops, batched, never re-sent.

The front end keeps the transcript; the kernel only appends to it. An op is a short JSON list,
`[kind, *args]`; ops go out in batches, each a bare JSON list of ops (`[["t", "..."]]`: the comm
envelope around it is ipywidgets' own, some 40 bytes), at most every `interval` seconds, with
consecutive text deltas joined. The first text of a run (an answer's first words, the text after a
tool card) goes out at once; after that a batch of fewer than `MIN_BATCH` characters waits up to
`max_wait`, so a slow stream does not pay an envelope per word: an answer costs under twice its own
bytes at any speed down to a word a second or so. Every op is also kept, joined the same way, so a
view that opens later (a reload, a second view) gets the whole transcript once (`{"replay":
view_id, "ops": [...]}`). Pure: no widget, no event loop.

Ops: `u` user prompt · `t` answer text · `r` reasoning text · `tool` card started · `ask`
approval wanted · `asked` approval answered · `diff` a file changed · `done` card finished (with
what a run showed, as `output_html` renders it) · `undo` a code block's Run can be taken back ·
`undone` it was (or why not) · `note` notice · `retry` a retry's wait · `err` error · `end` turn
over (done / failed / stopped) · `clear` new chat.

A retry takes back what its failed attempt showed, as the cell does (`cell_view.py`): `retry`
withdraws the `t` and `r` ops since the last other op (the broken stream's words, which the retry
streams again) and any notice of an earlier wait, and its own notice lasts only until the next op.
The front end applies the same rule to the ops it has shown; the kept transcript applies it as
ops are kept (`_keep`), so a view that opens later sees what a view that was open shows.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover
    from typing_extensions import assert_never

from ...agent.session import TurnEvent, TurnNote
from ...events import (
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
)
from ...text import clip
from ..approval_prompt import arguments_preview, warning
from ..output_html import outputs_html

Op = list[Any]
UPDATE_INTERVAL = 0.1
"""Seconds between batches while streaming: smooth to the eye, few messages for the browser."""
MAX_WAIT = 0.6
"""Longest a small batch waits for more text: the latency of a slow stream after its first words
(time enough for `MIN_BATCH` characters at 20 tokens a second, so the envelope stays below the
text)."""
MIN_BATCH = 48
"""Characters of text worth a message of their own once `UPDATE_INTERVAL` has passed."""
CLIP = 4000
"""Characters of a tool's result or diff shown in its card; the model still gets all of it.
Arguments are never clipped: an approval shows everything it approves (the card folds them)."""
JOINABLE = frozenset({"t", "r"})
RETRY = "retry"
"""The op of a retry's wait: it takes back the failed attempt's text, and lasts until the next op."""
URGENT = frozenset({"u", "ask", "asked", "undone", RETRY, "err", "end", "clear"})
"""Ops the user waits for: they go out at once, with whatever is pending before them."""


def event_ops(event: TurnEvent) -> list[Op]:  # noqa: C901 - one branch per event type the panel shows, in one place
    """The ops that show one event of a turn (usage goes to the meter, not the transcript)."""
    match event:
        case TextDelta(text=text):
            return [["t", text]] if text else []
        case ReasoningDelta(text=text):
            return [["r", text]] if text else []
        case ToolStarted(
            call_id=call_id, name=name, summary=summary, arguments=arguments, parent=parent
        ):
            kind, preview = arguments_preview(arguments)
            shown = f"↳ {name}" if parent else name  # a subagent's call, under its parent
            return [["tool", call_id, shown, summary, kind, preview]]
        case Question(call_id=call_id, question=text, options=options, asker=asker):
            shown = f"{asker} asks: {text}" if asker else text  # a server, not the model
            return [["ask", call_id, "question", shown, list(options)]]
        case ApprovalNeeded(call_id=call_id, category="plan"):  # the plan is the answer above
            return [["tool", call_id, "plan", "", "", ""], ["ask", call_id, "plan"]]
        case ApprovalNeeded(call_id=call_id, category=category, preview=preview):
            note = warning(event)
            if preview is not None:  # what will happen, in place of the card's arguments
                what = [preview.kind, preview.text, preview.summary]
                return [["ask", call_id, category, note, [], *what]]
            return [["ask", call_id, category, note] if note else ["ask", call_id, category]]
        case FileChanged(path=path, diff=diff):
            return [["diff", path, clip(diff, CLIP)]]
        case CellChanged(notebook=notebook, cell_id=cell_id, diff=diff):
            return [["diff", f"{notebook} cell {cell_id}", clip(diff, CLIP)]]
        case ToolFinished(call_id=call_id, ok=ok, summary=summary, content=content):
            done = ["done", call_id, ok, summary, clip(content, CLIP)]
            shown = outputs_html(event.outputs)
            return [[*done, shown] if shown else done]
        case Notice(text=text, retry=True):
            return [[RETRY, text]]
        case Notice(text=text) | TurnNote(text=text):
            return [["note", text]]
        case ToolsUpdated() as update:
            return [["note", update.text]]
        case Failed(error=error):
            return [["err", error, ""]]
        case Done() | UsageReported():
            return []
    assert_never(event)


class Outbox:
    """Batches ops for the front end and keeps the transcript so far for views that open later."""

    def __init__(
        self,
        send: Callable[[Any], None],
        *,
        interval: float = UPDATE_INTERVAL,
        max_wait: float = MAX_WAIT,
        clock: Callable[[], float] = time.monotonic,
        call_later: Callable[[float, Callable[[], None]], Any] | None = None,
    ) -> None:
        self._send = send
        self._interval = interval
        self._max_wait = max(max_wait, interval)
        self._clock = clock
        self._call_later = call_later
        self._pending: list[Op] = []
        self._size = 0
        self._timer: Any = None
        self._last = -math.inf
        self._run: str | None = None  # the kind of the last op queued
        self.history: list[Op] = []

    def put(self, op: Op) -> None:
        """Queue one op; send the batch now if the op is urgent, starts a run of text, or the
        batch is due."""
        kind = op[0]
        starts_text = kind in JOINABLE and self._run != kind
        self._run = kind
        _append(self._pending, op)
        _keep(self.history, op)
        self._size += len(op[1]) if kind in JOINABLE else MIN_BATCH
        elapsed = self._clock() - self._last
        due = elapsed >= self._max_wait or (elapsed >= self._interval and self._size >= MIN_BATCH)
        if kind in URGENT or starts_text or due:
            self.flush()
        elif self._timer is None and self._call_later is not None:
            delay = (self._interval if self._size >= MIN_BATCH else self._max_wait) - elapsed
            self._timer = self._call_later(delay, self.flush)

    def flush(self) -> None:
        """Send what is pending, if anything."""
        if self._timer is not None:
            cancel = getattr(self._timer, "cancel", None)
            if cancel is not None:
                cancel()
            self._timer = None
        if self._pending:
            batch, self._pending, self._size = self._pending, [], 0
            self._send(batch)
            self._last = self._clock()

    def clear(self) -> None:
        """Forget the transcript (new chat) and tell the views to empty theirs."""
        self._pending.clear()
        self._size = 0
        self.history.clear()
        self.put(["clear"])
        self.history.clear()
        self._run = None

    def seed(self, ops: list[Op]) -> None:
        """Start the transcript with these ops (a saved conversation), sent to views as they open."""
        for op in ops:
            _keep(self.history, op)

    def replay(self, view: str) -> None:
        """Send the whole transcript to one view that just opened."""
        self.flush()
        self._send({"replay": view, "ops": [list(op) for op in self.history]})


def _keep(ops: list[Op], op: Op) -> None:
    """Keep `op` in the transcript as a view shows it: a retry's wait ends at the next op, and a
    retry takes back the failed attempt's text (see the module's docstring)."""
    if ops and ops[-1][0] == RETRY:
        ops.pop()
    if op[0] == RETRY:
        while ops and ops[-1][0] in JOINABLE:
            ops.pop()
    _append(ops, op)


def _append(ops: list[Op], op: Op) -> None:
    """Append a copy of `op`, joining text onto a text op of the same kind just before it."""
    if op[0] in JOINABLE and ops and ops[-1][0] == op[0]:
        ops[-1][1] += op[1]
    else:
        ops.append(list(op))
