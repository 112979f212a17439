"""What a cassette costs: one model turn live against a loopback server, recorded, and replayed.

A turn of 5,000 streamed text deltas (about 40 KB of text, 1 MB of SSE) and one tool call, over
the real OpenAI wire. Live and recording talk to the same loopback server; replaying talks to
nobody. The table shows medians and each ratio to live: recording should add little (it copies
bytes as they pass and writes one line), replaying should be no slower than a live loopback turn.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb import Agent  # noqa: E402
from copilot_nb.models.cassettes.cassette import Cassette, active_cassette, using  # noqa: E402
from copilot_nb.models.openai.chat import OpenAIChat  # noqa: E402
from copilot_nb.testing import ScriptedServer, call, reply  # noqa: E402

REPEATS = 7
TEXT = "word " * 8_000


def script() -> list[Any]:
    return [reply("", call("list_directory", path=".")), reply(TEXT, chunk_size=8)]


def one_turn(url: str, workspace: Path) -> float:
    model = OpenAIChat("bench", base_url=url, api_key="k")
    model.endpoint.tape = active_cassette  # as the session tapes the models it builds
    agent = Agent(model=model, workspace=workspace)

    async def run() -> float:
        began = time.perf_counter()
        answer = await agent.ask("What is here?")
        assert answer == TEXT, answer[:80]
        return time.perf_counter() - began

    return asyncio.run(run())


def main() -> None:
    times: dict[str, list[float]] = {"live": [], "recording": [], "replaying": []}
    with tempfile.TemporaryDirectory() as folder:
        root, tapes = Path(folder) / "workspace", Path(folder) / "tapes"
        root.mkdir()
        tapes.mkdir()
        (root / "a.txt").write_text("a\n")
        for index in range(REPEATS):
            tape = tapes / f"t{index}.copilot.jsonl"
            with ScriptedServer(script() * 2) as server:
                times["live"].append(one_turn(server.url, root))
                with using(Cassette(tape, "record")):
                    times["recording"].append(one_turn(server.url, root))
                url = server.url
            with using(Cassette(tape, "replay")):
                times["replaying"].append(one_turn(url, root))
        size = (tapes / "t0.copilot.jsonl").stat().st_size
    live = statistics.median(times["live"])
    print("\ncassettes: one turn, 5,000 text deltas and a tool call (median of 7)")
    print(f"{'turn':<12}{'ms':>10}{'vs live':>10}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<12}{median * 1e3:>10.1f}{median / live:>9.2f}x")
    print(f"cassette size: {size / 1024:,.0f} KiB")


if __name__ == "__main__":
    main()
