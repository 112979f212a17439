"""Chat panel streaming cost: bytes the widget sends its front end for a 20 KB, 5,000-delta answer.

The deltas go through the real widget and its batching (`ChatPanel` events -> `Outbox` ->
`widget.send` -> comm) at several model speeds, on a simulated clock (the outbox's timers
included) so each speed takes no time. The prompt goes out first and the answer's first delta
arrives `FIRST_DELAY` later, as from a model that starts at once. `payload` is the JSON of the
comm messages (what a fake comm records); `wire` adds the Jupyter message envelope each message
carries (header, parent header, signature), serialized as a kernel would; `resend all` is what
re-sending the whole transcript at every batch would cost, the way a display-update renderer does.
`first text` is how long the first delta waits before it is sent, `worst wait` the longest any
delta waits. Target: payload at most 2x the answer at every speed, the first text at once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import comm
from comm.base_comm import BaseComm
from jupyter_client.session import Session, json_packer

from copilot_nb.agent.session import CopilotSession
from copilot_nb.events import Done, TextDelta
from copilot_nb.jupyter.panel.feed import MAX_WAIT, UPDATE_INTERVAL, Outbox
from copilot_nb.jupyter.panel.widget import ChatPanel

DELTAS = 5_000
ANSWER = ("The **answer** streams in small pieces, `code` and all. " * 400)[: DELTAS * 4]
RATES = (None, 1000.0, 100.0, 20.0)
"""Deltas per second; None: the whole answer arrives at once."""
TARGET = 2.0
FIRST_DELAY = 0.05
"""Seconds between the prompt going out and the answer's first delta."""


class _Recorder(BaseComm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sent: list[Any] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        if msg_type == "comm_msg":
            self.sent.append(data)


class _Clock:
    """Simulated time, with the outbox's timers (`call_later`) fired when their time comes."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[list[Any]] = []  # [deadline, callback, live]

    def call_later(self, delay: float, callback: Any) -> Any:
        timer = [self.now + delay, callback, True]
        self.timers.append(timer)

        class Handle:
            def cancel(self) -> None:
                timer[2] = False

        return Handle()

    def advance(self, to: float) -> None:
        """Move to `to`, firing every live timer due by then at its own time."""
        while True:
            due = [t for t in self.timers if t[2] and t[0] <= to]
            if not due:
                break
            timer = min(due, key=lambda t: t[0])
            timer[2] = False
            self.now = timer[0]
            timer[1]()
        self.timers = [t for t in self.timers if t[2]]
        self.now = to


def measure(rate: float | None) -> dict[str, float]:
    """Stream the answer through a panel at `rate` deltas per second; count what was sent."""
    original = comm.create_comm
    comm.create_comm = _Recorder
    try:
        panel = ChatPanel(CopilotSession(), model="offline")
    finally:
        comm.create_comm = original
    recorder: _Recorder = panel.widget.comm
    clock = _Clock()
    panel.outbox = Outbox(
        panel.widget.send,
        interval=UPDATE_INTERVAL,
        clock=lambda: clock.now,
        call_later=clock.call_later,
    )
    panel.outbox.put(["u", "the question"])
    recorder.sent.clear()
    waiting: list[float] = []  # arrival times of deltas not sent yet
    waits: list[float] = []
    shown = 0
    resend_all = 0

    def note_sends(upto: int) -> None:
        nonlocal shown, resend_all
        if len(recorder.sent) != shown:
            shown = len(recorder.sent)
            resend_all += upto
            waits.extend(clock.now - arrived for arrived in waiting)
            waiting.clear()

    step = 4
    for index, start in enumerate(range(0, len(ANSWER), step)):
        arrives = FIRST_DELAY + (index / rate if rate is not None else 0.0)
        clock.advance(arrives)
        note_sends(start)
        waiting.append(clock.now)
        panel._show(TextDelta(text=ANSWER[start : start + step]))
        note_sends(start + step)
    panel._show(Done(text=ANSWER))
    panel.outbox.put(["end", "done"])
    note_sends(len(ANSWER))
    session = Session(key=b"benchmark-key")
    parent = session.msg("comm_msg", {})
    payload = wire = 0
    for data in recorder.sent:
        payload += len(json_packer(data))
        content = {"comm_id": recorder.comm_id, "data": data}
        message = session.msg("comm_msg", content, parent=parent)
        wire += sum(len(part) for part in session.serialize(message))
    answer = len(ANSWER.encode())
    return {
        "messages": len(recorder.sent),
        "payload": payload / answer,
        "wire": wire / answer,
        "resend": resend_all / answer,
        "first": waits[0],
        "worst": max(waits),
    }


def main() -> float:
    print(f"\nChat panel: a {len(ANSWER) / 1000:.0f} KB answer in {DELTAS:,} deltas, batched every")
    print(f"{UPDATE_INTERVAL * 1000:.0f} ms (small batches wait up to {MAX_WAIT * 1000:.0f} ms);")
    print("bytes sent to the front end as a multiple of the answer")
    print(
        f"{'deltas/s':>9}  {'messages':>8}  {'payload':>7}  {'target':>6}  {'wire':>6}"
        f"  {'resend all':>10}  {'first text':>10}  {'worst wait':>10}"
    )
    worst = 0.0
    for rate in RATES:
        row = measure(rate)
        worst = max(worst, row["payload"])
        label = "burst" if rate is None else f"{rate:,.0f}"
        print(
            f"{label:>9}  {row['messages']:>8,.0f}  {row['payload']:>6.2f}x  {'<= 2x':>6}"
            f"  {row['wire']:>5.1f}x  {row['resend']:>9.1f}x  {row['first'] * 1000:>7.0f} ms"
            f"  {row['worst'] * 1000:>7.0f} ms"
        )
    verdict = "ok" if worst <= TARGET else "OVER TARGET"
    print(f"worst payload {worst:.2f}x (target <= {TARGET:.0f}x): {verdict}")
    return worst


if __name__ == "__main__":
    main()
