"""The path every answer takes into a `%%copilot` cell: how soon the first words show, how many
bytes the cell's updates send the front end, and the kernel's CPU per streamed token.

- first words: a loopback server streams an answer; the time from its first text byte leaving
  the socket to the first display update that shows text (the floor is 0: nothing waits).
- bytes: the cell's display updates (HTML and plain text, as `update_display_data` carries them)
  for a 5,000-token answer arriving at 50 and at 1,000 tokens a second, beside the answer's own
  bytes (the floor); a simulated clock, so the slow rate does not take 100 s. Then the same to a
  page with copilot_nb's extension, which grows the output in place (`cell_growth.py`).
- CPU: the thread that runs the kernel's loop, over a whole turn of 20,000 tokens at 1,000 a
  second from a loopback server (the server's threads are not counted), per 1,000 tokens; the
  floor is plain httpx reading the same stream to its end.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from copilot_nb.agent.session import CopilotSession
from copilot_nb.events import Done, TextDelta
from copilot_nb.jupyter.cell_growth import PageGrowth
from copilot_nb.jupyter.cell_view import CellRenderer, render_turn
from copilot_nb.testing.script import reply
from copilot_nb.testing.server import ScriptedServer, _Handler
from tests.text_samples import PROSE

TOKEN = 4
"""Characters per streamed token (a typical English token)."""
FIRST_WORDS_TARGET_MS = 30.0
BYTES_TARGET = 2.0
CPU_TARGET_MS = 30.0
REPEATS = 5
ENVELOPE = 550
"""Bytes of a Jupyter message around its content (header, parent header, channel), as
JupyterLab's kernel websocket carries it: counted for every update and every growth."""
TEXT = re.compile(rb'"content":\s*"[^"]')
"""A chunk that carries answer text (the first chunk's empty content does not count)."""


def answer(tokens: int) -> str:
    """Markdown prose with headings, lists and code, `tokens` * TOKEN characters."""
    piece = f"## Part\n\n{PROSE[:600]}\n\n- a **b** `c`\n\n```python\nx = 1\n```\n\n"
    size = tokens * TOKEN
    return (piece * (size // len(piece) + 1))[:size]


class _Recording:
    """A display handle that keeps the size and time of each update, as the kernel sends it."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.times: list[float] = []
        self.texts: list[str] = []

    def __call__(self, rendered: Any, display_id: bool = True, metadata: Any = None) -> _Recording:
        self.update(rendered)
        return self

    def update(self, rendered: Any, metadata: Any = None) -> None:
        self.sizes.append(ENVELOPE + len(rendered.html.encode()) + len(rendered.text.encode()))
        self.times.append(time.monotonic())
        self.texts.append(rendered.text)


def bytes_sent(tokens: int, rate: float, *, page: bool = False) -> tuple[int, int]:
    """(bytes of every update, bytes of the answer) for an answer at `rate` tokens a second;
    with `page`, to a page with copilot_nb's extension, which grows the output in place (the
    growth messages' JSON counted beside the whole display and last update)."""
    text = answer(tokens)
    now = [0.0]
    display = _Recording()
    growths: list[int] = []
    growth = (
        PageGrowth(lambda data: growths.append(ENVELOPE + len(json.dumps(data).encode())))
        if page
        else None
    )
    renderer = CellRenderer(display=display, clock=lambda: now[0], page=growth)
    for start in range(0, len(text), TOKEN):
        now[0] += 1 / rate
        renderer.handle(TextDelta(text=text[start : start + TOKEN]))
    renderer.handle(Done(text=text))
    renderer.finish({})
    assert display.texts[-1].startswith(text[:100]), "the final output is whole"
    return sum(display.sizes) + sum(growths), len(text.encode())


class _TimedHandler(_Handler):
    """The scripted model's stream, noting when its first text byte leaves."""

    first_text: ClassVar[list[float]] = []

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send_stream(
        self, events: Iterable[bytes], *, delay: float, break_after: int | None
    ) -> None:
        def noted() -> Iterable[bytes]:
            for data in events:
                if not _TimedHandler.first_text and TEXT.search(data):
                    _TimedHandler.first_text.append(time.monotonic())
                yield data

        super()._send_stream(noted(), delay=delay, break_after=break_after)


class _TimedServer(ScriptedServer):
    handler = _TimedHandler


async def one_turn(tokens: int, delay: float) -> tuple[float, float]:
    """(ms from the server's first text byte to the cell's first text, thread CPU seconds)."""
    _TimedHandler.first_text.clear()
    with _TimedServer([reply(answer(tokens), chunk_size=TOKEN, delay=delay)]) as server:
        model = server.model()
        session = CopilotSession(resolve=lambda spec: model)
        display = _Recording()
        renderer = CellRenderer(display=display)
        cpu = time.thread_time()
        await render_turn(session.turn("Write it.", approver=None), renderer)
        cpu = time.thread_time() - cpu
    shown = next(t for t, text in zip(display.times, display.texts, strict=True) if text.strip("…"))
    return (shown - _TimedHandler.first_text[0]) * 1000, cpu


async def floor_cpu(tokens: int, delay: float) -> float:
    """Thread CPU seconds for plain httpx to read the same stream to its end."""
    with _TimedServer([reply(answer(tokens), chunk_size=TOKEN, delay=delay)]) as server:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
        cpu = time.thread_time()
        url = f"{server.url}/chat/completions"
        async with (
            httpx.AsyncClient(timeout=60) as client,
            client.stream("POST", url, json=body) as response,
        ):
            async for _ in response.aiter_bytes():
                pass
        return time.thread_time() - cpu


def main() -> dict[str, float]:
    firsts = [asyncio.run(one_turn(200, 0.001))[0] for _ in range(REPEATS)]
    first = statistics.median(firsts)
    _, cpu = asyncio.run(one_turn(20_000, 0.001))
    floor = asyncio.run(floor_cpu(20_000, 0.001))
    slow, size = bytes_sent(5_000, 50)
    fast, _ = bytes_sent(5_000, 1_000)
    slow_page, _ = bytes_sent(5_000, 50, page=True)
    fast_page, _ = bytes_sent(5_000, 1_000, page=True)
    print("\nStreaming an answer into a %%copilot cell")
    print(f"{'figure':<62} {'ours':>9} {'floor':>9}  target")
    print(
        f"{'server first text byte -> first text in the cell':<62} {first:>6.1f} ms {0:>6.1f} ms  <= {FIRST_WORDS_TARGET_MS:g} ms"
    )
    rows = (
        ("50", "", slow),
        ("1,000", "", fast),
        ("50", ", extension", slow_page),
        ("1,000", ", extension", fast_page),
    )
    for label, where, sent in rows:
        what = f"bytes to the front end, 5,000 tokens at {label}/s{where}"
        target = f"<= {BYTES_TARGET:g}x" if where else "n log n"
        print(
            f"{what:<62} {sent / 1e6:>6.2f} MB {size / 1e6:>6.2f} MB  {target} ({sent / size:.1f}x)"
        )
    per_k = cpu / 20 * 1000
    print(
        f"{'loop thread CPU per 1,000 tokens (20,000 at 1,000/s)':<62} {per_k:>6.1f} ms {floor / 20 * 1000:>6.1f} ms  <= {CPU_TARGET_MS:g} ms"
    )
    return {
        "first_ms": first,
        "bytes_slow": slow,
        "bytes_fast": fast,
        "bytes_slow_page": slow_page,
        "bytes_fast_page": fast_page,
        "cpu_per_k_ms": per_k,
    }


if __name__ == "__main__":
    main()
