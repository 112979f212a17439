"""One notebook document open in a front end, and its end of the live comm: requests sent with
a time limit and their replies matched by number, news from the page handed on, and every
waiting request answered "gone" when the page closes. `live_channel.py` keeps the views."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ToolError

REQUEST_TIMEOUT = 10.0
"""Seconds a front end gets to answer one request (a snapshot of 2,000 cells takes ~0.1 s)."""

_ids = itertools.count(1)


def next_id() -> int:
    """A request number unique in this kernel (replies are matched by it)."""
    return next(_ids)


class LiveView:
    """One notebook document open in a front end, and the comm to it."""

    def __init__(
        self,
        comm: Any,
        data: dict[str, Any],
        on_event: Callable[[LiveView, dict[str, Any]], None] | None = None,
    ) -> None:
        self.comm = comm
        self.on_event = on_event
        """Handles what the front end says unasked (a message with an `event` key)."""
        self.path = str(data.get("path") or "")
        self.server_root = str(data.get("server_root") or "")
        self.client = str(data.get("client") or "")
        self.app = str(data.get("app") or "Jupyter")
        protocol = data.get("protocol")
        self.protocol = protocol if isinstance(protocol, int) else 1
        """The page's live protocol: what it can do beyond the first (`cell_growth.py`)."""
        self.closed = False
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}

    @property
    def absolute(self) -> Path | None:
        """Where the notebook is on this machine (None if the front end gave no server root)."""
        if not self.server_root or not os.path.isabs(os.path.expanduser(self.server_root)):
            return None
        return Path(os.path.expanduser(self.server_root), self.path)

    async def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its reply; ToolError if refused, gone or silent."""
        if self.closed:
            raise ToolError(f"the open notebook {self.path} was closed; call list_cells again")
        number = next_id()
        reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[number] = reply
        try:
            self.comm.send({"id": number, "op": op, **fields})
            data = await asyncio.wait_for(reply, REQUEST_TIMEOUT)
        except asyncio.TimeoutError:
            raise ToolError(
                f"the open notebook {self.path} did not answer within {REQUEST_TIMEOUT:g} s "
                f"({self.app} may be busy or the page closed); nothing was changed"
            ) from None
        finally:
            self._waiting.pop(number, None)
        if data.get("ok"):
            result: dict[str, Any] = data.get("result") or {}
            return result
        raise ToolError(_refusal(self.path, data))

    def receive(self, msg: dict[str, Any]) -> None:
        """A comm message from the front end: a reply, or news (an `event`: `EVENTS`)."""
        data = msg.get("content", {}).get("data") or {}
        if "request" in data:  # the front end asks: ghost text (ghost_text.py)
            from .ghost_text import handle_request

            handle_request(self, data)
            return
        if "event" in data:
            if self.on_event is not None:
                self.on_event(self, data)
            return
        waiter = self._waiting.get(data.get("id"))  # type: ignore[arg-type]
        if waiter is not None:  # the comm may be handled on another thread (a subshell)
            waiter.get_loop().call_soon_threadsafe(_settle, waiter, data)

    def close(self) -> None:
        self.closed = True
        for waiter in self._waiting.values():
            gone = {"ok": False, "code": "gone", "error": "the page closed"}
            waiter.get_loop().call_soon_threadsafe(_settle, waiter, gone)


def _settle(waiter: asyncio.Future[dict[str, Any]], data: dict[str, Any]) -> None:
    if not waiter.done():
        waiter.set_result(data)


def _refusal(path: str, data: dict[str, Any]) -> str:
    code, error = data.get("code"), str(data.get("error") or "refused")
    if code == "conflict":
        return (
            f"{error}: the user changed it since you read it; nothing was changed. Call "
            "read_cell to see the current source, then make your change again if it still applies"
        )
    if code == "missing":
        return f"{error} (the user may have deleted it); call list_cells to see the cells now"
    return f"the open notebook {path} refused the change: {error}; nothing was changed"
