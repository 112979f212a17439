"""A fake browser view of the chat panel for tests: a comm that records what the widget sends,
and a front end that reads those ops and sends what a user does."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from comm.base_comm import BaseComm

from copilot_nb.jupyter.panel.widget import ChatPanel


class RecordingComm(BaseComm):
    """Stands in for the kernel's comm: keeps every message the widget publishes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.published: list[tuple[str, Any]] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        self.published.append((msg_type, data))


class Front:
    """A fake browser view of one panel: reads what the kernel sent, sends what a user does."""

    def __init__(self, panel: ChatPanel) -> None:
        self.panel = panel
        self.comm: RecordingComm = panel.widget.comm

    def custom(self) -> list[dict[str, Any]]:
        return [
            data["content"]
            for kind, data in self.comm.published
            if kind == "comm_msg" and data.get("method") == "custom"
        ]

    def completions(self) -> list[dict[str, Any]]:
        """The answers to `@` queries, in the order they were sent."""
        return [message for message in self.custom() if message.get("kind") == "completions"]

    def ops(self) -> list[dict[str, Any]]:
        """Every op of every batch (not replays), in order."""
        return [
            op for message in self.custom() if message.get("kind") == "ops" for op in message["ops"]
        ]

    def kinds(self) -> list[str]:
        return [op["op"] for op in self.ops()]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The ops of one kind."""
        return [op for op in self.ops() if op["op"] == kind]

    def text(self) -> str:
        return "".join(op["text"] for op in self.of("text"))

    def say(self, **content: Any) -> None:
        self.comm.handle_msg(comm_message({"method": "custom", "content": content}))

    def set(self, **state: Any) -> None:
        self.comm.handle_msg(comm_message({"method": "update", "state": state}))

    async def until(self, predicate: Any, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"timed out; ops so far: {self.ops()[-5:]}"
            await asyncio.sleep(0.01)


def comm_message(data: dict[str, Any]) -> dict[str, Any]:
    """A comm_msg from the front end, as the kernel hands it to the comm."""
    return {"content": {"comm_id": "", "data": data}, "buffers": []}
