"""The agent process's end of a session's kernel: start it (or attach to a running one), load
copilot_nb in it, open the comm, and hand each turn's events to whoever runs the turn.

Nothing the kernel prints reaches our stdout, which carries only ACP: its streams go to the log
(stderr).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Mapping
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from ..errors import ConfigError
from .kernel_end import TARGET

START_TIMEOUT = 60.0
"""Seconds a kernel has to start and load copilot_nb before the session fails."""
ALIVE_CHECK = 1.0
"""Seconds between checks that the kernel still lives while a turn waits for its events."""
DIED = (
    "the session's kernel stopped (it crashed or was shut down) and took the turn with it; "
    "what it saved is kept: load the session again, or start a new one"
)
HELLO = "copilot_nb.hello"
"""copilot_nb's greeting to a notebook front end: we are none, and say so at once."""
SETUP = (
    "%load_ext copilot_nb\n"
    "import copilot_nb.acp.kernel_end as _copilot_nb_acp\n"
    "_copilot_nb_acp.install(get_ipython())\n"
    "del _copilot_nb_acp\n"
)

_log = logging.getLogger(__name__)


class KernelLink:
    """One kernel and the comm to copilot_nb in it; `messages` carries the comm's data in order."""

    def __init__(
        self, cwd: str, env: Mapping[str, str] | None = None, notebook: str | None = None
    ) -> None:
        self.cwd = cwd
        self.notebook = os.path.join(cwd, notebook) if notebook else None
        """The notebook the session works on (its cells, and its conversation file beside it)."""
        self.env = dict(env) if env is not None else None
        self.manager: AsyncKernelManager | None = None
        self.client: Any = None
        self.comm_id = uuid.uuid4().hex
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.model = ""
        self.conversation = ""
        self.saved = ""
        """The file the kernel saves this session's conversation in."""
        self._reader: asyncio.Task[None] | None = None

    async def start(
        self,
        connection_file: str | None = None,
        conversation: str | None = None,
        mcp: dict[str, Any] | None = None,
    ) -> None:
        """A new kernel in `cwd`, or the running one of `connection_file`; then the comm, for
        a new conversation or the saved `conversation` taken up again."""
        if connection_file:
            from jupyter_client.asynchronous import AsyncKernelClient

            self.client = AsyncKernelClient(connection_file=connection_file)
            self.client.load_connection_file()
        else:
            self.manager = AsyncKernelManager(kernel_name="python3")
            env = {**os.environ, **(self.env or {})}
            await self.manager.start_kernel(cwd=self.cwd, env=env)
            self.client = self.manager.client()
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=START_TIMEOUT)
        # the kernel's notebook, as ipykernel names a served one, before copilot_nb loads
        named = (
            f"get_ipython().user_ns['__session__'] = {self.notebook!r}\n" if self.notebook else ""
        )
        reply = await self.client.execute_interactive(
            named + SETUP, timeout=START_TIMEOUT, output_hook=self._route
        )
        if reply["content"]["status"] != "ok":
            error = reply["content"].get("evalue", "")
            raise ConfigError(f"copilot_nb could not be loaded in the session's kernel: {error}")
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self._send(
            "comm_open",
            {"target_name": TARGET, "data": {"conversation": conversation, "mcp": mcp or {}}},
        )
        ready = await asyncio.wait_for(self.messages.get(), START_TIMEOUT)
        if ready.get("error"):
            raise LookupError(ready["error"])
        self.model = str(ready.get("model", ""))
        self.conversation = str(ready.get("conversation", ""))
        self.saved = str(ready.get("saved", ""))

    async def next(self) -> dict[str, Any]:
        """The kernel's next message; an `end` of our own if the kernel died meanwhile, so a
        turn never waits on a dead kernel."""
        while True:
            try:
                return await asyncio.wait_for(self.messages.get(), ALIVE_CHECK)
            except asyncio.TimeoutError:
                if self.manager is not None and not await self.manager.is_alive():
                    return {"op": "end", "status": "failed", "error": DIED}

    def send(self, data: dict[str, Any]) -> None:
        """One message to the kernel's end (a prompt, an answer, a cancel)."""
        self._send("comm_msg", {"data": data})

    def _send(self, msg_type: str, content: dict[str, Any]) -> None:
        message = self.client.session.msg(msg_type, {"comm_id": self.comm_id, **content})
        self.client.shell_channel.send(message)

    async def _read(self) -> None:
        """Route the kernel's iopub: our comm's data to `messages`, the rest to the log."""
        while True:
            self._route(await self.client.get_iopub_msg())

    def _route(self, message: dict[str, Any]) -> None:
        msg_type = message["msg_type"]
        content = message["content"]
        if msg_type == "comm_msg" and content.get("comm_id") == self.comm_id:
            self.messages.put_nowait(content["data"])
        elif msg_type == "comm_open" and content.get("target_name") == HELLO:
            self.client.shell_channel.send(
                self.client.session.msg("comm_close", {"comm_id": content["comm_id"]})
            )
        elif msg_type == "stream":
            _log.info("kernel %s: %s", message["content"]["name"], message["content"]["text"])
        elif msg_type == "error":
            _log.warning("kernel error: %s", message["content"].get("evalue", ""))

    async def stop(self) -> None:
        """Stop reading; shut the kernel down if we started it (an attached one lives on)."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self.client is not None:
            self.client.stop_channels()
        if self.manager is not None:
            await self.manager.shutdown_kernel(now=True)
