"""What a turn costs us: a 20-round tool-calling turn through the chat panel, against a loopback
model that answers at once; then an answer-only turn and a 5,000-token reply sent in a burst.

Each round the model asks for one read-only tool (read_file, find_files, search_text in turn) and
the last round answers in text. The turn runs the whole way a user's does: the session's prompt
assembly and context block, the model's request and stream decoding, the tool's dispatch in its
worker, the events, and the panel's transcript ops on a comm that records them. The model's part
is measured apart, as the floor: the same 21 requests, with the same bodies, posted by plain httpx
on one client and read to the end. `ours per round` = (turn - floor) / rounds, medians of REPEATS
turns after a warm-up turn (the first turn in a process imports and checks the tools' schemas).
A ticker on the loop (every TICK) records the worst lag while each turn runs.

Target, from the profile (`python benchmarks/bench_turn.py --profile [cumulative|tottime]`):
before this bench a round cost some 40 ms, two thirds of it estimating the tokens of the tool
list's 20 KB of JSON twice a round and checking every tool's JSON schema again each turn; both
are now remembered. What is left is some 5 ms of CPU a round in many small steps: httpx sending
the request (its connection pool and h11, a third), the token estimate of the round's new
messages, decoding, the tool's hop to its worker thread and back, ten-odd events and their ops.
So 10 ms a round: a 20-round turn costs the user under a fifth of a second of its own, with room
for a busy machine. The loop must not stall longer than a frame (16 ms), so Stop and the widget's
messages stay live: judged on the median over the turns of each turn's worst lag, the worst
turn shown beside it (on a shared machine the ticker also counts the OS's descheduling).

The model frames each reply as providers do (an HTTP chunk per event) and sends it in one write,
as a server does with a reply it has ready: nothing more is on its way, so the stream's reader
must not pause for more (`models/read_pace.py`); a pause there cost each round some 14 ms. The
answer-only turn and the burst are timed whole, the best of REPEATS (a pause is a sleep: it costs
time, not CPU), beside last round's figures.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import socket
from collections.abc import Iterable

import comm
import httpx

from benchmarks.bench_loop import worst_lag
from benchmarks.bench_panel import _Recorder
from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel.widget import ChatPanel
from copilot_nb.testing.script import call, reply
from copilot_nb.testing.server import ScriptedServer, _Handler

ROUNDS = 20
REPEATS = 7
TICK = 0.002
ROUND_TARGET_MS = 10.0
LAG_TARGET_MS = 16.0
FILES = 40
BURST_TOKENS = 5_000
LAST_ROUND = {"round": 4.6, "answer": 20.7, "burst": 120.0}
"""Last round's figures in ms (a quiet machine, best of two): ours per round, the answer-only
turn, the 5,000-token burst."""


class _AtOnceHandler(_Handler):
    """The scripted model's replies, each framed as providers frame a stream (an HTTP chunk per
    event) and sent whole in one write as soon as it is asked for."""

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send_stream(
        self, events: Iterable[bytes], *, delay: float, break_after: int | None
    ) -> None:
        body = b"".join(b"%x\r\n%s\r\n" % (len(data), data) for data in events)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(body + b"0\r\n\r\n")


class AtOnceServer(ScriptedServer):
    """A ScriptedServer that answers at once: no pacing, no chunk per event, no Nagle delay."""

    handler = _AtOnceHandler


def make_project(root: Path) -> None:
    """A small project: 40 modules of ~2 KB in four packages."""
    for number in range(FILES):
        package = root / "src" / f"pkg_{number % 4}"
        package.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"def step_{n}(value):\n    return value * {n} + {number}\n\n" for n in range(40)
        )
        (package / f"module_{number}.py").write_text(f'"""Module {number}."""\n\n{body}')


def script() -> list[Any]:
    """20 rounds of one tool call each, then the answer."""
    steps = []
    for n in range(ROUNDS):
        kind = n % 3
        if kind == 0:
            tool = call("read_file", id=f"c{n}", path=f"src/pkg_{n % 4}/module_{n}.py")
        elif kind == 1:
            tool = call("find_files", id=f"c{n}", glob="src/**/*.py")
        else:
            tool = call("search_text", id=f"c{n}", regex=f"def step_{n}\\b", glob="src/**")
        steps.append(reply(f"Round {n}: looking.", tool))
    steps.append(reply("All " + "done. " * 40))
    return steps


def new_panel(server: AtOnceServer) -> ChatPanel:
    original = comm.create_comm
    comm.create_comm = _Recorder
    try:
        model = server.model()  # one model, one connection pool, as a kernel's session keeps
        session = CopilotSession(resolve=lambda spec: model)
        return ChatPanel(session, model="openai:scripted", max_rounds=ROUNDS + 5)
    finally:
        comm.create_comm = original


async def one_turn(server: AtOnceServer) -> tuple[float, float, int]:
    """(seconds, worst loop lag in seconds, ops sent) for one turn on a new panel."""
    panel = new_panel(server)
    recorder: _Recorder = panel.widget.comm  # type: ignore[assignment]

    async def turn() -> None:
        panel.send("Read the project and tell me about it.")
        await panel.wait()

    elapsed, worst, _ = await worst_lag(turn, TICK)
    ops = [op for data in recorder.sent for op in (data.get("content") or [])]
    assert ops[-1] == ["end", "done"], ops[-3:]
    done = sum(1 for op in ops if op[0] == "done")
    assert done == ROUNDS, f"{done} tool cards finished, expected {ROUNDS}"
    return elapsed, worst, len(ops)


def answer_script() -> list[Any]:
    """One reply of text, no tool."""
    return [reply("All " + "done. " * 40)]


def burst_script() -> list[Any]:
    """One reply of BURST_TOKENS four-character pieces, all sent at once."""
    return [reply("".join(f"w{n % 1000:03d}" for n in range(BURST_TOKENS)), chunk_size=4)]


async def answer_seconds(steps: list[Any]) -> float:
    """Seconds of one turn on a new panel, from the request to the turn's end."""
    with AtOnceServer(steps) as server:
        panel = new_panel(server)
        started = time.perf_counter()
        panel.send("Tell me about the project.")
        await panel.wait()
        return time.perf_counter() - started


async def floor_seconds(url: str, bodies: list[bytes]) -> float:
    """The model's part: the same requests posted and read to the end by plain httpx."""
    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=60) as client:
        for body in bodies:
            async with client.stream(
                "POST",
                f"{url}/chat/completions",
                content=body,
                headers={"Content-Type": "application/json"},
            ) as response:
                async for _ in response.aiter_bytes():
                    pass
    return time.perf_counter() - started


async def measure(root: Path) -> dict[str, float]:
    turns: list[float] = []
    floors: list[float] = []
    lags: list[float] = []
    for repeat in range(REPEATS + 1):  # the first is a warm-up
        with AtOnceServer(script()) as server:
            elapsed, lag, _ = await one_turn(server)
            bodies = [json.dumps(request.body).encode() for request in server.requests]
        with AtOnceServer(script()) as server:
            floor = await floor_seconds(server.url, bodies)
        if repeat:
            turns.append(elapsed)
            floors.append(floor)
            lags.append(lag)
    turn, floor = statistics.median(turns), statistics.median(floors)
    answers = [await answer_seconds(answer_script()) for _ in range(REPEATS + 1)]
    bursts = [await answer_seconds(burst_script()) for _ in range(REPEATS + 1)]
    return {
        "turn": turn,
        "floor": floor,
        "round": (turn - floor) / ROUNDS,
        "lag": max(lags),
        "lag_median": statistics.median(lags),
        "answer": min(answers[1:]),  # the first is a warm-up
        "burst": min(bursts[1:]),
    }


def profile(root: Path) -> None:
    """Where a turn's own time goes: cProfile of one turn (the loop's thread only)."""

    async def run() -> None:
        with AtOnceServer(script()) as server:
            await one_turn(server)
        with AtOnceServer(script()) as server:
            profiler = cProfile.Profile()
            profiler.enable()
            await one_turn(server)
            profiler.disable()
        pstats.Stats(profiler).sort_stats(*(sys.argv[2:3] or ["cumulative"])).print_stats(40)

    asyncio.run(run())


def main() -> dict[str, float]:
    previous = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="copilot_nb_turn_") as folder:
        root = Path(folder)
        make_project(root)
        os.chdir(root)
        try:
            if "--profile" in sys.argv:
                profile(root)
                return {}
            row = asyncio.run(measure(root))
        finally:
            os.chdir(previous)
    print(f"\nA {ROUNDS}-round tool-calling turn through the chat panel (median of {REPEATS})")
    print(f"{'figure':<44} {'last round':>10} {'this run':>9}  target")

    def line(label: str, value: float, last: float | None = None, target: str = "") -> None:
        before = f"{last:>7.1f} ms" if last is not None else ""
        print(f"{label:<44} {before:>10} {value * 1000:>6.1f} ms  {target}".rstrip())

    line("whole turn", row["turn"])
    line("the model part (same requests, plain httpx)", row["floor"])
    line("ours per round", row["round"], LAST_ROUND["round"], f"<= {ROUND_TARGET_MS:g} ms")
    line(f"an answer-only turn (best of {REPEATS})", row["answer"], LAST_ROUND["answer"])
    burst = f"a {BURST_TOKENS:,}-token reply in a burst (best of {REPEATS})"
    line(burst, row["burst"], LAST_ROUND["burst"])
    line(
        "worst loop lag in a turn (median of turns)",
        row["lag_median"],
        target=f"<= {LAG_TARGET_MS:g} ms (worst turn {row['lag'] * 1000:.1f} ms; tick "
        f"{TICK * 1000:g} ms)",
    )
    return row


if __name__ == "__main__":
    main()
