"""What the chat panel sends its front end: agent events as small ops, batched, never re-sent.

The front end keeps the transcript; the kernel only appends to it. An op is a small JSON object
with named fields (`{"op": "text", "text": "..."}`; `wire.py` defines every one); ops go out in
batches (`{"kind": "ops", "ops": [...]}`: the comm envelope around it is ipywidgets' own, some 40
bytes), at most every `interval` seconds, with consecutive text deltas joined. The first text of a
run (an answer's first words, the text after a tool card) goes out at once; after that a batch of
fewer than `MIN_BATCH` characters waits up to `max_wait`, so a slow stream does not pay an envelope
per word: at 20 tokens a second or faster an answer costs under three times its own bytes (46 bytes
of ours and the envelope per batch of some 48 characters or more).
Every op is also kept, joined the same way, so a view that opens later (a reload, a second view)
gets the whole transcript once (`{"kind": "replay", "view": view_id, "ops": [...]}`). Pure: no
widget, no event loop.

Ops: `user` prompt · `text` answer text · `reasoning` reasoning text · `tool` card started ·
`ask` approval wanted · `question` the model asks · `asked` either answered · `diff` a file
changed · `done` card finished (with what a run showed, as `output_html` renders it) · `undoable`
a code block's Run can be taken back · `undone` it was (or why not) · `note` notice · `retry` a
retry's wait · `error` error · `end` turn over (done / failed / stopped) · `clear` new chat.

A retry takes back what its failed attempt showed, as the cell does (`cell_view.py`): `retry`
withdraws the `text` and `reasoning` ops since the last other op (the broken stream's words, which
the retry streams again) and any notice of an earlier wait, and its own notice lasts only until the
next op. The front end applies the same rule to the ops it has shown; the kept transcript applies
it as ops are kept (`_keep`), so a view that opens later sees what a view that was open shows.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any, Final

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
from .wire import AskOp, DoneOp, Op, ToPage

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
JOINABLE = frozenset({"text", "reasoning"})
RETRY: Final = "retry"
"""The op of a retry's wait: it takes back the failed attempt's text, and lasts until the next op."""
URGENT = frozenset({"user", "ask", "question", "asked", "undone", RETRY, "error", "end", "clear"})
"""Ops the user waits for: they go out at once, with whatever is pending before them."""


def event_ops(event: TurnEvent) -> list[Op]:
    """The ops that show one event of a turn (usage goes to the meter, not the transcript)."""
    match event:
        case TextDelta(text=text):
            return [{"op": "text", "text": text}] if text else []
        case ReasoningDelta(text=text):
            return [{"op": "reasoning", "text": text}] if text else []
        case ToolStarted(
            call_id=call_id, name=name, summary=summary, arguments=arguments, parent=parent
        ):
            kind, preview = arguments_preview(arguments)
            shown = f"↳ {name}" if parent else name  # a subagent's call, under its parent
            return [tool_op(call_id, shown, summary, kind, preview)]
        case Question(call_id=call_id, question=text, options=options, asker=asker):
            shown = f"{asker} asks: {text}" if asker else text  # a server, not the model
            return [{"op": "question", "id": call_id, "question": shown, "options": list(options)}]
        case ApprovalNeeded():
            return approval_ops(event)
        case FileChanged(path=path, diff=diff):
            return [{"op": "diff", "path": path, "diff": clip(diff, CLIP)}]
        case CellChanged(notebook=notebook, cell_id=cell_id, diff=diff):
            return [{"op": "diff", "path": f"{notebook} cell {cell_id}", "diff": clip(diff, CLIP)}]
        case ToolFinished():
            return [done_op(event)]
        case Notice(text=text, retry=True):
            return [{"op": "retry", "text": text}]
        case Notice(text=text) | TurnNote(text=text):
            return [note_op(text)]
        case ToolsUpdated() as update:
            return [note_op(update.text)]
        case Failed(error=error):
            return [error_op(error)]
        case Done() | UsageReported():
            return []
    assert_never(event)


def approval_ops(event: ApprovalNeeded) -> list[Op]:
    """A call waits for Approve or Deny: its card's buttons (a plan gets a card of its own, the
    plan being the answer above it)."""
    if event.category == "plan":
        plan: AskOp = {"op": "ask", "id": event.call_id, "category": "plan", "warning": ""}
        return [tool_op(event.call_id, "plan", "", "", ""), plan]
    ask: AskOp = {
        "op": "ask",
        "id": event.call_id,
        "category": event.category,
        "warning": warning(event),
    }
    if event.preview is not None:  # what will happen, in place of the card's arguments
        ask["format"], ask["preview"] = event.preview.kind, event.preview.text
        ask["target"] = event.preview.summary
    return [ask]


def done_op(event: ToolFinished) -> Op:
    """A call finished: its outcome, its result (clipped) and what a run showed."""
    done: DoneOp = {
        "op": "done",
        "id": event.call_id,
        "ok": event.ok,
        "summary": event.summary,
        "result": clip(event.content, CLIP),
    }
    shown = outputs_html(event.outputs)
    if shown:
        done["output"] = shown
    return done


def tool_op(call_id: str, name: str, target: str, format: str, preview: str) -> Op:
    """A tool call's card."""
    return {
        "op": "tool",
        "id": call_id,
        "name": name,
        "target": target,
        "format": format,
        "preview": preview,
    }


def note_op(text: str) -> Op:
    return {"op": "note", "text": text}


def error_op(message: str, detail: str = "") -> Op:
    """An error: the line the user reads, and the details (a traceback) they can open."""
    return {"op": "error", "message": message, "detail": detail}


def end_op(status: str) -> Op:
    return {"op": "end", "status": status}


class Outbox:
    """Batches ops for the front end and keeps the transcript so far for views that open later."""

    def __init__(
        self,
        send: Callable[[ToPage], None],
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
        kind = op["op"]
        starts_text = kind in JOINABLE and self._run != kind
        self._run = kind
        _append(self._pending, op)
        _keep(self.history, op)
        self._size += len(_text(op)) if kind in JOINABLE else MIN_BATCH
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
            self._send({"kind": "ops", "ops": batch})
            self._last = self._clock()

    def clear(self) -> None:
        """Forget the transcript (new chat) and tell the views to empty theirs."""
        self._pending.clear()
        self._size = 0
        self.history.clear()
        self.put({"op": "clear"})
        self.history.clear()
        self._run = None

    def seed(self, ops: list[Op]) -> None:
        """Start the transcript with these ops (a saved conversation), sent to views as they open."""
        for op in ops:
            _keep(self.history, op)

    def replay(self, view: str) -> None:
        """Send the whole transcript to one view that just opened."""
        self.flush()
        self._send({"kind": "replay", "view": view, "ops": [_copy(op) for op in self.history]})


def _keep(ops: list[Op], op: Op) -> None:
    """Keep `op` in the transcript as a view shows it: a retry's wait ends at the next op, and a
    retry takes back the failed attempt's text (see the module's docstring)."""
    if ops and ops[-1]["op"] == RETRY:
        ops.pop()
    if op["op"] == RETRY:
        while ops and ops[-1]["op"] in JOINABLE:
            ops.pop()
    _append(ops, op)


def _append(ops: list[Op], op: Op) -> None:
    """Append a copy of `op`, joining text onto a text op of the same kind just before it."""
    last = ops[-1] if ops else None
    if last is not None and last["op"] == op["op"] and op["op"] in JOINABLE:
        _join(last, _text(op))
    else:
        ops.append(_copy(op))


def _text(op: Op) -> str:
    """The words of a text or reasoning op (empty for any other)."""
    return op["text"] if op["op"] == "text" or op["op"] == "reasoning" else ""


def _join(op: Op, text: str) -> None:
    if op["op"] == "text" or op["op"] == "reasoning":
        op["text"] += text


def _copy(op: Op) -> Op:
    """A copy a later join cannot change (a sent batch, the kept transcript, a replay)."""
    copied: Op = {**op}  # type: ignore[assignment]  # mypy reads a spread as dict[str, object]
    return copied
