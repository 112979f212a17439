"""What the test files share besides fixtures: call a tool, wait for what can be seen, record sleeps.

Tests wait for observable state, never for time to pass: `wait_until` (a thread or a plain test)
and `until` (on the test's loop) poll a predicate until it holds, and fail with a message after a
generous deadline that only guards against a hang.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from copilot_nb.tools import ToolOutput, ToolSet

DEADLINE = 10.0
"""Seconds before a wait gives up: long enough for a loaded CI machine, short enough to read."""


async def call(tools: ToolSet, tool_name: str, /, **arguments: Any) -> ToolOutput:
    """Call one tool by name with keyword arguments, as the model would, and get its output."""
    return await tools.call_tool(tool_name, arguments)


def wait_until(
    predicate: Callable[[], object], timeout: float = DEADLINE, *, what: str = ""
) -> None:
    """Block until `predicate()` is true; an AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what or predicate}"
        time.sleep(0.005)  # a poll interval: the loop ends on the predicate, not on the time


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server a test starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_http(
    url: str, process: subprocess.Popen[bytes], log: Path, *, what: str, timeout: float
) -> None:
    """Block until `url` answers 200 from the server `process` started; its exit, or no answer
    within `timeout`, raises with the end of its `log`."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{what} did not start within {timeout:g}s:\n{log.read_text()[-3000:]}"
            )
        time.sleep(0.2)  # a poll interval: the loop ends on the answer, not on the time


async def until(
    predicate: Callable[[], object], timeout: float = DEADLINE, *, what: str = ""
) -> None:
    """`wait_until` on the running loop: other tasks run while it polls."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what or predicate}"
        await asyncio.sleep(0.005)


class Sleeps:
    """An injectable async sleep that records the waits asked for and returns at once; `clock`
    is a matching injectable clock that moves only by what was slept."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.now = 0.0

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)  # still a point where other tasks run, as a real sleep is

    def clock(self) -> float:
        return self.now


SNAPSHOTS = Path(__file__).parent / "data" / "snapshots"


def assert_schemas_match_snapshot(tools: ToolSet, name: str) -> None:
    """What the model sees of these tools equals `data/snapshots/NAME`, so a change to it shows
    up as a diff of that file (rewritten with COPILOT_NB_UPDATE_SNAPSHOTS=1)."""
    snapshot = SNAPSHOTS / name
    actual = [
        {"name": s.name, "description": s.description, "parameters": s.parameters}
        for s in tools.list_tools()
    ]
    if os.environ.get("COPILOT_NB_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert json.loads(snapshot.read_text()) == actual, (
        "tool schemas changed; rerun with COPILOT_NB_UPDATE_SNAPSHOTS=1 and review the diff"
    )
