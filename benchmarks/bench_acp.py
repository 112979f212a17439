"""What `copilot-nb acp` costs an editor: the time from `initialize` to the first streamed text
of a trivial prompt (the agent process's start and the session's kernel included), and each
turn's overhead against the same turn as a `%%copilot` cell in a kernel.

Both drive a real kernel against a loopback model that answers at once. The cold start is timed
from spawning the agent (as an editor does) through `initialize`, `session/new` (the kernel
starts and loads copilot_nb) and `session/prompt` to the first `agent_message_chunk`; the best of
COLD runs, with its parts. A warm turn is `session/prompt` to its response in a live session,
the median of TURNS after a warm-up; the cell is an `execute_request` of `%%copilot hi` to its
reply on a kernel with copilot_nb loaded, the median of TURNS after a warm-up. The difference
is what the protocol costs a turn: the comm hop out of the kernel and the JSON-RPC hop to the
editor, per event.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from copilot_nb.testing.script import reply
from copilot_nb.testing.server import ScriptedServer

COLD = 3
TURNS = 15
ANSWER = "Hello from the notebook agent."
COLD_TARGET_S = 5.0
OVERHEAD_TARGET_MS = 50.0


class _Editor:
    """The SDK's client side, noting when the first text arrived."""

    def __init__(self) -> None:
        self.first_text: float | None = None

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.first_text is None and update.session_update == "agent_message_chunk":
            self.first_text = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a trivial prompt asks nothing")


def _env(server: ScriptedServer, cwd: str) -> dict[str, str]:
    """The loopback model, and settings of the run's own (never the user's conversations)."""
    return {
        **os.environ,
        "COPILOT_NB_MODEL": "openai:scripted",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "k",
        "COPILOT_NB_CONFIG_DIR": os.path.join(cwd, ".settings"),
    }


async def _acp(server: ScriptedServer, cwd: str) -> tuple[dict[str, float], list[float]]:
    from acp import spawn_agent_process, text_block

    editor = _Editor()
    began = time.perf_counter()
    async with spawn_agent_process(
        editor, sys.executable, "-m", "copilot_nb", "acp", env=_env(server, cwd), cwd=cwd
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        initialized = time.perf_counter()
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        opened = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert editor.first_text is not None
        cold = {
            "initialize": initialized - began,
            "session/new": opened - initialized,
            "first text": editor.first_text - opened,
            "total": editor.first_text - began,
        }
        turns = []
        for _ in range(TURNS):
            start = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
            turns.append(time.perf_counter() - start)
    return cold, turns


def _cells(server: ScriptedServer, cwd: str) -> list[float]:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=cwd, env=_env(server, cwd))
    try:
        client.execute_interactive("%load_ext copilot_nb", timeout=60, output_hook=_quiet)
        client.execute_interactive("%%copilot\nhi", timeout=60, output_hook=_quiet)  # warm-up
        times = []
        for _ in range(TURNS):
            start = time.perf_counter()
            reply_msg = client.execute_interactive("%%copilot\nhi", timeout=60, output_hook=_quiet)
            times.append(time.perf_counter() - start)
            assert reply_msg["content"]["status"] == "ok"
        return times
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _quiet(message: dict[str, Any]) -> None:
    """The cell's displays are the kernel's to send and ours to ignore here."""


def main() -> None:
    try:
        import acp  # noqa: F401
    except ImportError:
        print("bench_acp: skipped (install the `acp` extra: agent-client-protocol)")
        return
    with ScriptedServer([reply(ANSWER) for _ in range(4 * (TURNS + 2) * COLD)]) as server:
        colds: list[dict[str, float]] = []
        warm: list[float] = []
        for _ in range(COLD):
            with tempfile.TemporaryDirectory() as cwd:
                cold, turns = asyncio.run(_acp(server, cwd))
                colds.append(cold)
                warm = warm or turns
        with tempfile.TemporaryDirectory() as cwd:
            cells = _cells(server, cwd)
    best = min(colds, key=lambda c: c["total"])
    acp_turn = statistics.median(warm) * 1000
    cell_turn = statistics.median(cells) * 1000
    print(
        f"copilot-nb acp: initialize to first text (best of {COLD}), and a turn (median of {TURNS})"
    )
    print(f"{'measure':<34}{'value':>12}{'target':>12}")
    for part in ("initialize", "session/new", "first text"):
        print(f"{'  ' + part:<34}{best[part]:>11.2f}s{'':>12}")
    print(f"{'spawn + initialize -> first text':<34}{best['total']:>11.2f}s{COLD_TARGET_S:>11.1f}s")
    print(f"{'turn over ACP':<34}{acp_turn:>10.1f}ms")
    print(f"{'the same turn as a %%copilot cell':<34}{cell_turn:>10.1f}ms")
    overhead = acp_turn - cell_turn
    print(f"{'ACP overhead per turn':<34}{overhead:>10.1f}ms{OVERHEAD_TARGET_MS:>10.0f}ms")


if __name__ == "__main__":
    main()
