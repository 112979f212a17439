"""Chat panel streaming cost: bytes the widget sends its front end for a 20 KB, 5,000-delta answer.

The deltas go through the real widget and its batching (`ChatPanel` events -> `Outbox` ->
`widget.send` -> comm) at several model speeds, on a simulated clock so each speed takes no
time. `payload` is the JSON of the comm messages (what a fake comm records); `wire` adds the
Jupyter message envelope each message carries (header, parent header, signature), serialized
as a kernel would; `resend all` is what re-sending the whole transcript at every batch would
cost, the way a display-update renderer does. Target: payload under 5x the answer.
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
TARGET = 5.0


class _Recorder(BaseComm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sent: list[Any] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        if msg_type == "comm_msg":
            self.sent.append(data)


def measure(rate: float | None) -> dict[str, float]:
    """Stream the answer through a panel at `rate` deltas per second; count what was sent."""
    original = comm.create_comm
    comm.create_comm = _Recorder
    try:
        panel = ChatPanel(CopilotSession(), model="offline")
    finally:
        comm.create_comm = original
    recorder: _Recorder = panel.widget.comm
    now = [0.0]
    panel.outbox = Outbox(panel.widget.send, interval=UPDATE_INTERVAL, clock=lambda: now[0])
    recorder.sent.clear()
    shown = 0
    resend_all = 0
    step = 4
    for start in range(0, len(ANSWER), step):
        panel._show(TextDelta(text=ANSWER[start : start + step]))
        if rate is not None:
            now[0] += 1 / rate
        if recorder.sent and len(recorder.sent) != shown:
            shown = len(recorder.sent)
            resend_all += start + step
    panel._show(Done(text=ANSWER))
    panel.outbox.put(["end", "done"])
    resend_all += len(ANSWER)
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
    }


def main() -> float:
    print(f"\nChat panel: a {len(ANSWER) / 1000:.0f} KB answer in {DELTAS:,} deltas, batched every")
    print(f"{UPDATE_INTERVAL * 1000:.0f} ms (small batches wait up to {MAX_WAIT * 1000:.0f} ms);")
    print("bytes sent to the front end as a multiple of the answer")
    print(f"{'deltas/s':>9}  {'messages':>8}  {'payload':>7}  {'wire':>6}  {'resend all':>10}")
    worst = 0.0
    for rate in RATES:
        row = measure(rate)
        worst = max(worst, row["payload"])
        label = "burst" if rate is None else f"{rate:,.0f}"
        print(
            f"{label:>9}  {row['messages']:>8,.0f}  {row['payload']:>6.2f}x  {row['wire']:>5.1f}x"
            f"  {row['resend']:>9.1f}x"
        )
    verdict = "ok" if worst < TARGET else "OVER TARGET"
    print(f"worst payload {worst:.2f}x (target < {TARGET:.0f}x): {verdict}")
    return worst


if __name__ == "__main__":
    main()
