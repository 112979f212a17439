"""A real IPython kernel for tests: started with jupyter_client, driven by execute requests."""

from __future__ import annotations

import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

from tests.patience import patient


@dataclass
class Execution:
    """Everything the kernel sent back for one execute request."""

    reply: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in types]

    def final_displays(self, mime: str = "text/plain") -> dict[str, str]:
        """The last output of this type (else its text) under each display id (updates replace
        earlier ones)."""
        shown: dict[str, str] = {}
        for message in self.of_type("display_data", "update_display_data"):
            content = message["content"]
            key = content.get("transient", {}).get("display_id", str(len(shown)))
            data = content["data"]
            shown[key] = data.get(mime) or data.get("text/plain", "")
        return shown

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream"))


def scripted_env(server: Any, **extra: str) -> dict[str, str]:
    """Environment that points a kernel's `%%copilot` at a loopback ScriptedServer."""
    return {
        "COPILOT_NB_MODEL": "openai:scripted",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "k",
        **extra,
    }


HELLO = "copilot_nb.hello"


class KernelSession:
    """A kernel and the client that drives it. The client answers copilot_nb's hello as a Jupyter
    front end without copilot_nb's extension does (JupyterLab closes a comm whose target it does
    not know); a test that plays the extension attaches with tests/live_frontend.py."""

    def __init__(
        self, cwd: Path, env: dict[str, str] | None = None, *, answers_hello: bool = True
    ) -> None:
        self.answers_hello = answers_hello
        full_env = {**os.environ, **(env or {})}
        self.manager, self.client = start_new_kernel(
            kernel_name="python3", cwd=str(cwd), env=full_env, startup_timeout=patient(60)
        )

    def send(
        self, code: str, *, allow_stdin: bool = False, metadata: dict[str, Any] | None = None
    ) -> str:
        """Send code; `allow_stdin=True` is what an interactive front end sends, and a notebook
        one (JupyterLab, Notebook 7, VS Code) adds `metadata={"cellId": ...}`."""
        if metadata is None:
            return self.client.execute(code, allow_stdin=allow_stdin)
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": allow_stdin,
            "stop_on_error": True,
        }
        message = self.client.session.msg("execute_request", content, metadata=metadata)
        self.client.shell_channel.send(message)
        return message["header"]["msg_id"]

    def click(self, model_id: str) -> None:
        """Click an ipywidgets Button, as the browser would: a comm message to its model."""
        content = {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}}
        message = self.client.session.msg("comm_msg", content)
        self.client.shell_channel.send(message)

    def collect(self, msg_id: str, timeout: float = 60) -> Execution:
        """Gather iopub messages of a request until the kernel is idle again, then its reply."""
        messages: list[dict[str, Any]] = []
        timeout = patient(timeout)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"kernel did not finish within {timeout}s; saw {messages[-3:]}")
            try:
                message = self._next_iopub(remaining)
            except queue.Empty:
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
            messages.append(message)
        reply = self.client.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=timeout)
        return Execution(reply=reply, messages=messages)

    def _next_iopub(self, timeout: float) -> dict[str, Any]:
        message: dict[str, Any] = self.client.get_iopub_msg(timeout=timeout)
        content = message["content"]
        hello = message["msg_type"] == "comm_open" and content.get("target_name") == HELLO
        if hello and self.answers_hello:
            closing = {"comm_id": content["comm_id"], "data": {}}
            self.client.shell_channel.send(self.client.session.msg("comm_close", closing))
        return message

    def execute(self, code: str, timeout: float = 60) -> Execution:
        return self.collect(self.send(code), timeout)

    def restart(self) -> str:
        """Kernel > Restart, then `%load_ext` again: what it printed."""
        self.manager.restart_kernel(now=True)
        self.client.wait_for_ready(timeout=patient(60))
        loaded = self.execute("%load_ext copilot_nb")
        assert loaded.status == "ok", loaded.reply
        return loaded.stdout

    def wait_for(self, msg_id: str, msg_type: str, timeout: float = 30) -> list[dict[str, Any]]:
        """Read iopub until a message of this type arrives for the request; return what was read."""
        seen: list[dict[str, Any]] = []
        timeout = patient(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self._next_iopub(0.5)
            except queue.Empty:
                continue
            if message["parent_header"].get("msg_id") == msg_id:
                seen.append(message)
                if message["msg_type"] == msg_type:
                    return seen
        raise TimeoutError(f"no {msg_type} for the request within {timeout}s")

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
