"""What the test files share besides fixtures: call a tool, wait for what can be seen, record
sleeps; approvers and sessions for turns, kernels and their messages, MCP server configs, cassette
models, wire samples and snapshots. Tests import these from here, never from another test file.

Tests wait for observable state, never for time to pass: `wait_until` (a thread or a plain test)
and `until` (on the test's loop) poll a predicate until it holds, and fail with a message after a
generous deadline that only guards against a hang.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import queue
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx

from copilot_nb import Agent
from copilot_nb.agent.session import CopilotSession
from copilot_nb.events import ApprovalNeeded
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.cassettes.cassette import active_cassette
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.tools import ToolOutput, ToolSet
from tests.kernel_session import KernelSession

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
    """`wait_until` on the running loop: other tasks run while it polls; `predicate` may be a
    coroutine function (a query the test awaits)."""
    deadline = time.monotonic() + timeout
    while not await _value(predicate()):
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what or predicate}"
        await asyncio.sleep(0.005)


async def callbacks_ran(future: asyncio.Future[Any]) -> None:
    """Wait until the callbacks added to `future` so far have run: a future runs its callbacks in
    the order they were added, so one added now runs after them."""
    ran = asyncio.Event()
    future.add_done_callback(lambda _: ran.set())
    await ran.wait()


async def _value(result: object) -> object:
    return await result if inspect.isawaitable(result) else result


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


REPO = Path(__file__).resolve().parent.parent
KEY = "sk-proj-" + "Zq9" * 12
"""The API key cassette tests send (it must never reach a recording)."""
NOTEBOOK = "analysis.ipynb"
"""The notebook a `notebook_session` belongs to."""


# --- turns: approvers and sessions ----------------------------------------------------------

NOTEBOOK_7_OWN = re.compile(
    r"^(Cannot read properties of undefined \(reading 'schema'\)"
    r"|Command 'filebrowser:open-path' not registered\.)\n.*/static/notebook/notebook_core\."
)
"""Notebook 7.6 throws these itself on page load (its shortcuts plugin, its tree router), with or
without copilot_nb: checked with the extension disabled."""


RESTART_CANCELS_SUBSHELL = re.compile(
    r"^Error: Canceled future for create_subshell_request message before replies were done"
)
"""JupyterLab's widget manager asks a kernel for a subshell (copilot_nb never does); a restart
while it waits cancels that request, and JupyterLab reports it as uncaught."""


def button_ids(messages: list[dict]) -> dict[str, str]:
    """Button descriptions to model ids, from the widgets' comm_open messages."""
    found = {}
    for m in messages:
        if m["msg_type"] == "comm_open":
            state = m["content"]["data"].get("state", {})
            if state.get("_model_name") == "ButtonModel":
                found[state["description"]] = m["content"]["comm_id"]
    return found


def input_request(kernel: KernelSession, msg_id: str, timeout: float = 30) -> dict[str, Any]:
    """The kernel's next input_request for this execute request, read from the stdin channel."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = kernel.client.get_stdin_msg(timeout=0.5)
        except queue.Empty:
            continue
        if message["parent_header"].get("msg_id") == msg_id:
            return message
    raise TimeoutError(f"no input_request within {timeout}s")


def behaviours(**options: object) -> dict[str, object]:
    """The config entry of our own test server (tests/mcp_servers/behaviours.py), over stdio."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.mcp_servers.behaviours"],
        "cwd": str(REPO),
        **options,
    }


def session_for(server, root, monkeypatch, stop_servers):
    session = scripted_session(server, root, monkeypatch)
    stop_servers(session)
    return session


def results(request) -> list[str]:
    """The tool results a model request carries, oldest first (the last is the newest)."""
    return list(request.tool_results.values())


def offered(request) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def session_in(root, server, monkeypatch, **namespace) -> CopilotSession:
    monkeypatch.chdir(root)
    shell = SimpleNamespace(user_ns=namespace, user_ns_hidden={})
    session = CopilotSession(shell, resolve=lambda spec: server.model())
    session.toolset_factories = session.toolset_factories[:1]  # files only: no kernel here
    return session


def notebook_session(tmp_path: Path, server) -> CopilotSession:
    session = CopilotSession(SimpleNamespace(user_ns={"__session__": str(tmp_path / NOTEBOOK)}))
    session.model_spec = "openai:scripted"
    os.environ["OPENAI_BASE_URL"] = server.url
    return session


def kernel_in(folder: Path, env: dict[str, str], config: Path | None = None) -> KernelSession:
    """A kernel in `folder`; `config` (the user's settings, their cassette key among them) is the
    folder's own unless another user's is named."""
    folder.mkdir(parents=True, exist_ok=True)
    config = config or folder / ".config"
    kernel = KernelSession(folder, {"COPILOT_NB_CONFIG_DIR": str(config), **env})
    assert kernel.execute("%load_ext copilot_nb").status == "ok"
    return kernel


class Headless:
    """Where nobody can answer: every request that reaches it is denied, and counted."""

    def __init__(self, approved: bool = False) -> None:
        self.approved = approved
        self.asked: list[Any] = []

    def answer(self, request: ApprovalNeeded) -> None:
        self.asked.append(request.arguments)
        request.approve() if self.approved else request.deny("nobody could be asked")


def model_for(wire: str, url: str) -> Any:
    """A model of this wire at `url` (None: nothing listens), taped to the active cassette, as
    the session tapes the models it builds."""
    base = url or "http://127.0.0.1:9/v1"
    if wire == "anthropic":
        model = AnthropicChat("scripted", base_url=base.removesuffix("/v1"), api_key=KEY)
    elif wire == "responses":
        model = OpenAIResponses("scripted", base_url=base, api_key=KEY)
    else:
        model = OpenAIChat("scripted", base_url=base, api_key=KEY)
    model.endpoint.tape = active_cassette
    return model


def run_agent(model: Any, prompt: str, workspace: Path) -> list[Any]:
    agent = Agent(model=model, workspace=workspace)

    async def go() -> list[Any]:
        return [event async for event in agent.run(prompt)]

    return asyncio.run(go())


class Answering:
    """An `Approver` for tests: records each request and answers it at once (or never)."""

    def __init__(self, approve: bool | None = True) -> None:
        self.approve = approve
        self.asked: list[ApprovalNeeded] = []

    def answer(self, request: ApprovalNeeded) -> None:
        self.asked.append(request)
        if self.approve is not None:
            (request.approve if self.approve else request.deny)()


async def events_of(session: CopilotSession, prompt: str, **options) -> list:
    options.setdefault("approver", Answering())
    return [event async for event in session.turn(prompt, **options)]


def scripted_session(server, tmp_path, monkeypatch, **namespace) -> CopilotSession:
    monkeypatch.chdir(tmp_path)
    session = CopilotSession(SimpleNamespace(user_ns=namespace), resolve=lambda s: server.model())
    session.toolset_factories = session.toolset_factories[:1]  # files only: no kernel here
    return session


def write_config(root: Path, **servers: dict[str, object]) -> None:
    """The servers in the user's own `mcp.json` (the settings folder beside the workspace): a
    workspace's `.mcp.json` asks before anything starts (test_mcp_workspace_trust.py)."""
    user_dir = root.parent / "config"
    user_dir.mkdir(exist_ok=True)
    (user_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


class Planted:
    """What a crafted pickle does when loaded: here, harmlessly, it leaves a file at `mark`."""

    def __init__(self, mark: Path) -> None:
        self.mark = mark

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.mark,))
