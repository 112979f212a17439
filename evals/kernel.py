"""A real IPython kernel the harness drives: started with jupyter_client, one execute at a time."""

from __future__ import annotations

import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
from jupyter_client.manager import start_new_kernel

from copilot_nb.jupyter.approval_prompt import ALLOW, VERBS

SECRET_READ = f" wants to {VERBS['read-secret']}"
"""How an approval prompt names a secret read: the harness's user never approves one."""


def approval_answer(prompt: str, *, approve: bool) -> str | None:
    """The harness's answer to an approval prompt (`y` when it approves, never for a secret
    read), or None when the prompt is a question and not an approval."""
    if not prompt.endswith(ALLOW):
        return None
    return "y" if approve and SECRET_READ not in prompt else "n"


@dataclass
class Execution:
    """What the kernel sent back for one execute request."""

    status: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""

    def copilot_output(self) -> tuple[str, dict[str, Any]]:
        """The `%%copilot` output's last text and its `metadata.copilot_nb` (the provenance)."""
        text = ""
        provenance: dict[str, Any] = {}
        for message in self.messages:
            if message["msg_type"] not in ("display_data", "update_display_data"):
                continue
            content = message["content"]
            text = content["data"].get("text/plain", text)
            provenance = content.get("metadata", {}).get("copilot_nb", provenance)
        return text, provenance

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.messages if m["msg_type"] == "stream")


class Kernel:
    """One kernel for a whole run: each task gets its own folder and a new conversation."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.manager, self.client = start_new_kernel(
            kernel_name="python3", cwd=str(cwd), env={**os.environ, **env}, startup_timeout=60
        )

    def execute(
        self,
        code: str,
        timeout: float = 600,
        answers: list[str] | None = None,
        *,
        approve: bool = False,
    ) -> Execution:
        """Run code; with `answers` or `approve`, the kernel may ask through stdin (a console's
        `input()`): each question gets the next answer (an empty one when they run out), each
        approval `y` when `approve` (never a secret read) and `n` otherwise. With neither, nobody
        can answer and the kernel denies whatever it would ask."""
        stdin = answers is not None or approve
        answers = [] if answers is None else answers
        msg_id = self.client.execute(code, allow_stdin=stdin)
        messages: list[dict[str, Any]] = []
        # The cell's output and its questions are waited for together: a question is answered
        # when it comes, not at the next turn of a poll (0.2 s each, 10 s of a scripted run).
        iopub = self.client.iopub_channel.socket
        waiting = zmq.Poller()
        waiting.register(iopub, zmq.POLLIN)
        if stdin:
            waiting.register(self.client.stdin_channel.socket, zmq.POLLIN)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._interrupt(msg_id)
                raise TimeoutError(f"the kernel did not finish within {timeout:.0f} s")
            ready = dict(waiting.poll(max(1, round(remaining * 1000))))
            if stdin:
                self._answer(answers, approve)
            if iopub not in ready:
                continue
            message = self.client.get_iopub_msg(timeout=0)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
            messages.append(message)
        reply = self.client.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=30)
        content = reply["content"]
        error = f"{content.get('ename', '')}: {content.get('evalue', '')}"
        return Execution(content["status"], messages, error if content["status"] != "ok" else "")

    def _interrupt(self, msg_id: str, grace: float = 60) -> None:
        """Interrupt the cell and wait until the kernel is idle after it: a request sent while
        the interrupted cell is still ending is aborted by the kernel (its error stops the
        queue), so the next task's first cell would fail with no error to show."""
        self.manager.interrupt_kernel()
        deadline = time.monotonic() + grace
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                message = self.client.get_iopub_msg(timeout=min(remaining, 0.2))
            except queue.Empty:
                continue
            state = message["content"].get("execution_state")
            if message["parent_header"].get("msg_id") == msg_id and state == "idle":
                return

    def _answer(self, answers: list[str], approve: bool) -> None:
        try:
            request = self.client.get_stdin_msg(timeout=0)
        except queue.Empty:
            return
        prompt = str(request["content"].get("prompt", ""))
        answer = approval_answer(prompt, approve=approve)
        if answer is None:
            answer = answers.pop(0) if answers else ""
        self.client.input(answer)

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
