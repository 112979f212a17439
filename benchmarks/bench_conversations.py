"""What a saved conversation costs: resuming a long one, and writing a turn down as it goes.

Resume: a notebook's conversation of 2,000 turns (about 20 MB: each turn a request, a tool call,
a 9 KB result and an answer) is taken up by a new session, whose first request then goes to a
loopback server: the time from the start to that request's arrival (target under 300 ms), and the
memory the resume held at its peak (bounded by the model's window, not by the file).

Writing: one turn of 5,000 streamed text deltas and a tool call, through the session with saving
on and off (target: saving adds under 5% to the turn).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb.agent.conversations.format import conversation_path, record  # noqa: E402
from copilot_nb.agent.conversations.keeper import Keeper  # noqa: E402
from copilot_nb.agent.conversations.store import ConversationFile  # noqa: E402
from copilot_nb.agent.session import CopilotSession  # noqa: E402
from copilot_nb.events import ApprovalNeeded  # noqa: E402
from copilot_nb.testing import ScriptedServer, call, reply  # noqa: E402
from copilot_nb.testing.script import ScriptedRequest  # noqa: E402

TURNS = 2_000
REPEATS = 5
TEXT = "word " * 8_000
RESULT = "line of a file that the model read\n" * 260


class Yes:
    def answer(self, request: ApprovalNeeded) -> None:
        request.approve()


def write_conversation(path: Path) -> None:
    file = ConversationFile(path)
    batch: list[dict[str, Any]] = [record("start", "c0ffee00", at="2026-01-01T00:00:00+00:00")]
    for n in range(TURNS):
        turn = f"t{n}"
        arguments = f'{{"path": "data/part{n}.csv"}}'
        messages = [
            {"role": "user", "content": f"request {n}: look at part {n} and summarise it"},
            {
                "role": "assistant",
                "text": "",
                "tool_calls": [{"id": f"call{n}", "name": "read_file", "arguments": arguments}],
            },
            {"role": "tool", "tool_call_id": f"call{n}", "name": "read_file", "content": RESULT},
            {"role": "assistant", "text": f"Part {n} holds 260 lines of the same text."},
        ]
        batch += [record("message", "c0ffee00", turn=turn, message=m) for m in messages]
        batch.append(
            record(
                "turn",
                "c0ffee00",
                turn=turn,
                at="2026-01-01T00:00:00+00:00",
                model="gpt-4o",
                tokens={"input": 3000, "output": 40},
            )
        )
        if len(batch) > 500:
            file.append(batch)
            batch = []
    file.append(batch)


def resume_once(
    folder: Path, url: str, arrived: list[float], *, measure_memory: bool = False
) -> tuple[float, float, int]:
    """Seconds to resume, seconds to the first request, peak bytes held by the resume."""
    os.environ["OPENAI_BASE_URL"] = url
    session = CopilotSession(SimpleNamespace(user_ns={"__session__": str(folder / "nb.ipynb")}))
    session.model_spec = "openai:gpt-4o"
    if measure_memory:
        tracemalloc.start()
    began = time.perf_counter()
    resumed = session.saved.resume(session.current_model_spec())
    loaded = time.perf_counter() - began
    peak = 0
    if measure_memory:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert resumed is not None and resumed.turns >= TURNS, resumed

    async def first() -> None:
        async for _ in session.turn("one more", approver=Yes()):
            pass

    asyncio.run(first())
    return loaded, arrived[-1] - began, peak


SPENT = [0.0]
"""Seconds spent in the keeper's own work (every event looked at, every line written)."""


def timed(function: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[0] += time.perf_counter() - began

    return wrapper


for _name in ("begin", "observe", "notice", "end"):
    setattr(Keeper, _name, timed(getattr(Keeper, _name)))


def first_request_fresh(folder: Path, url: str, arrived: list[float]) -> float:
    """The same first request from a session with nothing saved: tools built, nothing to load."""
    os.environ["OPENAI_BASE_URL"] = url
    session = CopilotSession(SimpleNamespace(user_ns={"__session__": str(folder / "new.ipynb")}))
    session.model_spec = "openai:gpt-4o"
    session.saved.enabled = False
    began = time.perf_counter()

    async def first() -> None:
        async for _ in session.turn("one more", approver=Yes()):
            pass

    asyncio.run(first())
    return arrived[-1] - began


def turn_once(folder: Path, url: str, saving: bool) -> float:
    os.environ["OPENAI_BASE_URL"] = url
    session = CopilotSession(SimpleNamespace(user_ns={"__session__": str(folder / "w.ipynb")}))
    session.saved.enabled = saving
    session.model_spec = "openai:bench"

    async def run() -> float:
        began = time.perf_counter()
        async for _ in session.turn("What is here?", approver=Yes()):
            pass
        return time.perf_counter() - began

    return asyncio.run(run())


def main() -> None:
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(os.path.realpath(name))
        os.chdir(folder)
        try:
            (folder / "a.txt").write_text("a\n")
            path = conversation_path(folder / "nb.ipynb")
            write_conversation(path)
            size = path.stat().st_size
            arrived: list[float] = []

            def respond(request: ScriptedRequest) -> Any:
                arrived.append(time.perf_counter())
                return reply("ok")

            resumes = []
            with ScriptedServer(responder=respond) as server:
                memory = resume_once(folder, server.url, arrived, measure_memory=True)[2]
                fresh = statistics.median(
                    first_request_fresh(folder, server.url, arrived) for _ in range(REPEATS)
                )
                for _ in range(REPEATS):
                    resumes.append(resume_once(folder, server.url, arrived))
            turns: dict[bool, list[float]] = {False: [], True: []}
            steps = [reply("", call("list_directory", path=".")), reply(TEXT, chunk_size=8)]
            with ScriptedServer(steps * (2 * REPEATS + 2)) as server:
                turn_once(folder, server.url, False)  # warm: imports, the first connection
                SPENT[0] = 0.0
                for _ in range(REPEATS):
                    for saving in (False, True):
                        turns[saving].append(turn_once(folder, server.url, saving))
                spent = SPENT[0] / REPEATS
        finally:
            os.chdir(cwd)
    load = statistics.median(r[0] for r in resumes)
    first = statistics.median(r[1] for r in resumes)
    peak = memory
    on = statistics.median(turns[True])
    off = statistics.median(turns[False])
    print(f"\nsaved conversations (median of {REPEATS})")
    print(f"{'measure':<44}{'value':>14}{'target':>14}")
    print(f"{'conversation file':<44}{size / 1e6:>11.1f} MB{'':>14}")
    print(f"{'resume 2,000 turns: load':<44}{load * 1e3:>11.1f} ms{'':>14}")
    print(
        f"{'resume 2,000 turns: to the first request':<44}{first * 1e3:>11.1f} ms{'< 300 ms':>14}"
    )
    print(f"{'  same first request, nothing saved':<44}{fresh * 1e3:>11.1f} ms{'':>14}")
    print(f"{'  resume adds':<44}{(first - fresh) * 1e3:>11.1f} ms{'':>14}")
    print(f"{'resume: peak memory while loading':<44}{peak / 1e6:>11.2f} MB{'~ window':>14}")
    print(f"{'turn of 5,000 deltas, not saved':<44}{off * 1e3:>11.1f} ms{'':>14}")
    print(f"{'turn of 5,000 deltas, saved':<44}{on * 1e3:>11.1f} ms{'':>14}")
    print(f"{'  of which saving it (events, lines written)':<44}{spent * 1e3:>11.1f} ms{'':>14}")
    print(f"{'cost of saving, share of the turn':<44}{spent / on * 100:>11.2f} % {'< 5 %':>13}")


if __name__ == "__main__":
    main()
