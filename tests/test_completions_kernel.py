"""Inline completions in a real kernel, over the live channel as the front end asks for them:
request, streamed deltas and the final text (from the kernel's DataFrame), cancel, a `%%copilot`
turn running at the same time, and a kernel busy in `time.sleep(30)` (queued on the main
shell; answered at once on a subshell)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.testing import reply
from copilot_nb.testing.fim_wires import FillServer
from tests.helpers import wait_until
from tests.kernel_session import KernelSession, scripted_env
from tests.live_frontend import LiveFrontEnd
from tests.patience import patient
from tests.secret_namespace import GITHUB_TOKEN, NAMED_BY_TOKENS, assert_no_token_named

pytestmark = pytest.mark.kernel

SETUP = """\
import pandas as pd
df = pd.DataFrame({"city": ["Oslo", "Lima"], "price": [1.5, 2.0]})
%config CopilotMagics.completion_model = "ollama:qwen2.5-coder"
"""


class CompletingFrontEnd(LiveFrontEnd):
    """The stand-in front end, also asking for completions as `completionChannel.ts` does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.completions: list[tuple[float, dict[str, Any]]] = []
        self.arrived = threading.Condition()

    def _answer(self, data: dict[str, Any]) -> None:
        if data.get("reply") == "complete":
            with self.arrived:
                self.completions.append((time.monotonic(), data))
                self.arrived.notify_all()
            return
        super()._answer(data)

    def ask(
        self, ident: int, prefix: str, suffix: str = "", subshell: str | None = None, **more: Any
    ) -> None:
        data = {
            "request": "complete",
            "id": ident,
            "cell_id": "c9",
            "language": "python",
            "prefix": prefix,
            "suffix": suffix,
            "cells_above": [SETUP],
            **more,
        }
        self.send(data, subshell)

    def send(self, data: dict[str, Any], subshell: str | None = None) -> None:
        message = self._connection.session.msg("comm_msg", {"comm_id": self.comm_id, "data": data})
        if subshell is not None:
            message["header"]["subshell_id"] = subshell
        self._connection.shell_channel.send(message)

    def final(self, ident: int, timeout: float = 30) -> tuple[float, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                for at, data in self.completions:
                    if data["id"] == ident and data.get("done"):
                        return at, data
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no final reply for completion {ident}")
                self.arrived.wait(left)

    def of(self, ident: int) -> list[dict[str, Any]]:
        return [data for _, data in self.completions if data["id"] == ident]

    def subshell(self) -> str:
        """A kernel subshell (ipykernel 7), as JupyterLab's kernel API creates one."""
        message = self._connection.session.msg("create_subshell_request", {})
        self._connection.control_channel.send(message)
        answer = self._connection.get_control_msg(timeout=10)
        return str(answer["content"]["subshell_id"])


@pytest.fixture
def model_server() -> Iterator[FillServer]:
    with FillServer(["price", "'].sum()"], delay=0.05) as server:
        yield server


def start(tmp_path: Path, env: dict[str, str]) -> tuple[KernelSession, CompletingFrontEnd]:
    kernel = KernelSession(tmp_path, env)
    assert kernel.execute("%load_ext copilot_nb").status == "ok"
    assert kernel.execute(SETUP).status == "ok"
    front = CompletingFrontEnd(
        kernel.manager, path="n.ipynb", server_root=tmp_path, client=uuid.uuid4().hex, cells=[]
    )
    front.open()
    return kernel, front


@pytest.fixture
def session(
    tmp_path: Path, model_server: FillServer
) -> Iterator[tuple[KernelSession, CompletingFrontEnd]]:
    env = {"OLLAMA_BASE_URL": f"{model_server.base_url}/v1"}
    kernel, front = start(tmp_path, env)
    yield kernel, front
    front.stop()
    kernel.close()


def test_a_completion_streams_and_ends_with_text_from_the_kernels_dataframe(session, model_server):
    kernel, front = session
    front.ask(1, "total = df['", "\nprint(total)")
    _, final = front.final(1)
    assert final == {"reply": "complete", "id": 1, "done": True, "text": "price'].sum()"}
    deltas = [d["delta"] for d in front.of(1) if "delta" in d]
    assert "".join(deltas) == "price'].sum()" and len(deltas) == 2
    (call,) = model_server.calls
    assert call.path == "/api/generate"
    assert "# df: pandas.DataFrame (2, 2)" in call.body["prompt"]
    assert "#   columns: city (" in call.body["prompt"] and "price (float64)" in call.body["prompt"]
    assert call.body["suffix"] == "\nprint(total)"
    usage = kernel.execute("%copilot usage")
    assert "ollama:qwen2.5-coder: 1 requests (1 answered" in usage.stdout


def test_a_newer_request_cancels_the_older_and_cancel_complete_stops_one(tmp_path):
    with FillServer(["m()"], delay=0.6) as slow:
        kernel, front = start(tmp_path, {"OLLAMA_BASE_URL": f"{slow.base_url}/v1"})
        try:
            front.ask(1, "df.s")
            wait_until(lambda: len(slow.calls) == 1, what="the first request reached the server")
            front.ask(2, "df.su")
            assert front.final(2)[1]["text"] == "m()"
            front.ask(3, "df.c")
            wait_until(lambda: len(slow.calls) == 3, what="the third request reached the server")
            front.send({"request": "cancel_complete", "id": 3})
            wait_until(
                lambda: "2 cancelled" in kernel.execute("%copilot usage").stdout,
                what="both cancels counted",
            )
            assert front.of(1) == [] and front.of(3) == [], "no answer for what was cancelled"
        finally:
            front.stop()
            kernel.close()


def test_no_model_is_a_short_error_for_the_status_bar(tmp_path):
    kernel, front = start(tmp_path, {})
    try:
        kernel.execute('%config CopilotMagics.completion_model = ""')
        front.ask(1, "df.")
        _, final = front.final(1)
        assert final["text"] == ""
        assert final["error"].startswith("no model configured for completions")
    finally:
        front.stop()
        kernel.close()


def test_a_copilot_turn_and_completions_do_not_block_each_other(tmp_path, serve, model_server):
    chat = serve([reply("The total is in `total`. " * 8, chunk_size=10, delay=0.15)])
    env = {**scripted_env(chat), "OLLAMA_BASE_URL": f"{model_server.base_url}/v1"}
    kernel, front = start(tmp_path, env)
    try:
        turn = kernel.send("%%copilot --new\nwhat is the total?")
        wait_until(lambda: len(chat.requests) >= 1, what="the turn's model request is streaming")
        front.ask(1, "total = df['", "\n")
        answered_at, final = front.final(1, timeout=10)
        assert final["text"] == "price'].sum()"
        done = kernel.collect(turn, timeout=60)
        finished_at = time.monotonic()
        assert done.status == "ok"
        assert "The total is in" in "".join(done.final_displays().values())
        assert answered_at < finished_at - 0.5, "the completion came while the turn still ran"
    finally:
        front.stop()
        kernel.close()


SLEEP = 90
"""Seconds the busy cell would sleep: longer than any wait for the subshell's answer, however
busy the run, so an answer within it came while the cell slept."""


def test_a_busy_kernel_answers_after_the_cell_or_at_once_on_a_subshell(session):
    kernel, front = session
    sleeping = kernel.send(f"import time\ntime.sleep({SLEEP})")  # interrupted below
    kernel.wait_for(sleeping, "execute_input")
    asked_at = time.monotonic()
    front.ask(1, "total = df['", "\n")
    subshell = front.subshell()
    front.ask(2, "mean = df['", "\n", subshell=subshell)
    on_subshell_at, on_subshell = front.final(2, timeout=min(patient(10), SLEEP - 10))
    assert on_subshell["text"] == "price'].sum()"
    assert on_subshell_at - asked_at < SLEEP - 10, "the subshell answered while the cell slept"
    time.sleep(1.5)
    assert front.of(1) == [], "on the main shell the request waits behind the running cell"
    kernel.manager.interrupt_kernel()
    interrupted = kernel.collect(sleeping, timeout=30)
    assert interrupted.status == "error"  # KeyboardInterrupt
    _, queued = front.final(1, timeout=30)
    assert queued["text"] == "price'].sum()", "answered once the cell ended, in full"


def test_no_token_named_in_the_kernel_or_split_over_literals_reaches_the_model(
    session, model_server
):
    kernel, front = session
    assert kernel.execute(NAMED_BY_TOKENS).status == "ok"
    split = f'key = "{GITHUB_TOKEN[:12]}" "{GITHUB_TOKEN[12:]}"\n'
    for ident, target in enumerate(("obj.", "frame.", "mod.", "made.", "series."), 1):
        front.ask(ident, f"{split}print(cfg, frame, series, made, mod)\n{target}")
        assert front.final(ident)[1]["text"] == "price'].sum()"
    wire = json.dumps([(call.path, call.headers, call.body) for call in model_server.calls])
    assert len(model_server.calls) == 5 and "'host'" in wire and "price (float64)" in wire
    assert_no_token_named(wire)
