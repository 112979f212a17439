"""MCP servers in a real kernel: `%copilot mcp` lists, adds and removes them, a `%%copilot` cell
calls their tools and shows their changes, no server process outlives its kernel (a shutdown,
a restart, `%unload_ext`, a SIGKILL), and a workspace's server starts only once approved
(`%copilot mcp trust`)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from pathlib import Path

import psutil
import pytest

from copilot_nb.config import home_relative
from copilot_nb.testing import ScriptedServer, call, reply
from tests.helpers import input_request, wait_until
from tests.html_safety import table_rows, violations
from tests.kernel_session import KernelSession

pytestmark = pytest.mark.kernel

REPO = Path(__file__).resolve().parent.parent
SERVER_MODULE = "tests.mcp_servers.behaviours"
MARKUP_ARG = "--label=<b>x&y</b>"
"""An argument the server ignores, shown in the listing's `runs` column: it must be escaped."""


def write_config(folder: Path, *extra_args: str, file: str = "config/mcp.json") -> None:
    """Our test server `b` (tests/mcp_servers/behaviours.py) in the user's own `mcp.json` (the
    kernel's settings folder), or in another file of `folder`."""
    entry = {
        "command": sys.executable,
        "args": ["-m", SERVER_MODULE, *extra_args],
        "cwd": str(REPO),
    }
    (folder / file).parent.mkdir(exist_ok=True)
    (folder / file).write_text(json.dumps({"mcpServers": {"b": entry}}))


@pytest.fixture
def start_kernel(serve, kernel_for, tmp_path: Path):
    """`kernel, server = start_kernel(steps)`: a kernel in tmp_path, its `%%copilot` on a
    ScriptedServer, its settings in a temp folder."""

    def start(steps: list, *extra_args: str) -> tuple[KernelSession, ScriptedServer]:
        if not (tmp_path / ".mcp.json").exists() and not (tmp_path / "config").exists():
            write_config(tmp_path, *extra_args)
        server = serve(steps)
        return kernel_for(server, COPILOT_NB_CONFIG_DIR=str(tmp_path / "config")), server

    return start


def shown(run, mime: str = "text/plain") -> str:
    return "\n".join(run.final_displays(mime).values())


def server_pids(kernel_pid: int) -> list[int]:
    """The kernel's child processes that run our MCP test server."""
    found = []
    for child in psutil.Process(kernel_pid).children(recursive=True):
        try:
            if SERVER_MODULE in " ".join(child.cmdline()) and alive(child.pid):
                found.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent to reap it."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone_within(pid: int, timeout: float = 15) -> bool:
    wait_until(lambda: not alive(pid), timeout, what=f"process {pid} ended")
    return True


def kernel_pid(kernel: KernelSession) -> int:
    provisioner = kernel.manager.provisioner
    assert provisioner is not None and provisioner.pid is not None
    return provisioner.pid


def echo_turn(kernel: KernelSession) -> None:
    run = kernel.execute("%%copilot --yes\necho hi")
    assert run.status == "ok", run.reply["content"]


def test_listing_shows_the_server_running_with_its_tools_and_prompts(start_kernel, tmp_path):
    kernel, _ = start_kernel([], MARKUP_ARG)
    run = kernel.execute("%copilot mcp")
    assert run.status == "ok", run.reply["content"]

    plain = shown(run)
    head, tools_line = plain.splitlines()[:2]
    assert head.split()[:2] == ["b", "running"]
    assert MARKUP_ARG in head, "the command line it runs"
    tools = tools_line.split("tools: ")[1].split(";")[0].split(", ")
    assert {"b__echo", "b__grow", "b__die", "b__picture", "b__show_env"} <= set(tools)
    assert tools_line.endswith("prompts: review")

    markup = shown(run, "text/html")
    assert violations(markup) == []
    assert "<b>" not in markup and "&lt;b&gt;x&amp;y&lt;/b&gt;" in markup
    header, row = table_rows(markup)
    assert header == ["server", "state", "runs", "from", "tools", "prompts"]
    user_file = home_relative(tmp_path / "config" / "mcp.json")
    assert row[:2] == ["b", "running"] and row[3:] == [user_file, ", ".join(tools), "review"]
    assert row[2] == f"stdio: {sys.executable} -m {SERVER_MODULE} {MARKUP_ARG}"


def test_adding_and_removing_a_server_edits_the_workspace_config(serve, kernel_for, tmp_path):
    kernel = kernel_for(serve([]), COPILOT_NB_CONFIG_DIR=str(tmp_path / "config"))
    config = tmp_path / ".mcp.json"

    empty = kernel.execute("%copilot mcp")
    assert empty.status == "ok", empty.reply["content"]
    assert "no MCP servers are configured; add one with %copilot mcp add" in shown(empty)

    command = f"{shlex.quote(sys.executable)} -m {SERVER_MODULE}"
    added = kernel.execute(f"%copilot mcp add t -- {command}")
    assert added.status == "ok", added.reply["content"]
    assert "MCP server 't' added to .mcp.json" in added.stdout
    assert json.loads(config.read_text()) == {
        "mcpServers": {"t": {"command": sys.executable, "args": ["-m", SERVER_MODULE]}}
    }

    removed = kernel.execute("%copilot mcp remove t")
    assert removed.status == "ok", removed.reply["content"]
    assert "MCP server 't' removed from .mcp.json" in removed.stdout
    assert json.loads(config.read_text()) == {"mcpServers": {}}

    wrong = kernel.execute("%copilot mcp frobnicate")
    assert wrong.status == "error"
    assert wrong.reply["content"]["ename"] == "UsageError"
    assert "%copilot mcp add NAME" in wrong.reply["content"]["evalue"]


def test_a_copilot_cell_calls_a_server_tool_and_the_model_reads_its_answer(start_kernel):
    kernel, server = start_kernel([reply("", call("b__echo", text="hi")), reply("done")])
    run = kernel.execute("%%copilot --yes\necho hi")

    assert run.status == "ok", run.reply["content"]
    transcript = shown(run)
    assert "✓ b__echo" in transcript and "done" in transcript
    assert list(server.requests[1].tool_results.values()) == ["echo: hi"]


def test_a_tool_list_changed_mid_turn_is_shown_in_the_cell(start_kernel):
    kernel, server = start_kernel(
        [reply("", call("b__grow")), reply("", call("b__added", n=2)), reply("done")]
    )
    run = kernel.execute("%%copilot --yes\ngrow")

    assert run.status == "ok", run.reply["content"]
    transcript = shown(run)
    assert "tools of MCP server b updated: +b__added" in transcript
    assert transcript.index("b__grow") < transcript.index("updated: +b__added")
    assert list(server.requests[2].tool_results.values())[-1] == "added 2"


@pytest.mark.parametrize("end", ["shutdown", "restart", "unload", "sigkill"])
def test_no_server_process_outlives_its_kernel(start_kernel, end):
    kernel, _ = start_kernel([reply("", call("b__echo", text="hi")), reply("done")])
    echo_turn(kernel)
    first = kernel_pid(kernel)
    (server_pid,) = server_pids(first)

    if end == "shutdown":
        kernel.client.stop_channels()
        kernel.manager.shutdown_kernel(now=False)
    elif end == "restart":
        kernel.manager.restart_kernel(now=False)
        kernel.client.wait_for_ready(timeout=60)
        assert kernel.execute("1 + 1").status == "ok", "the new kernel answers"
        assert kernel_pid(kernel) != first
    elif end == "unload":
        assert kernel.execute("%unload_ext copilot_nb").status == "ok"
    else:
        os.kill(first, signal.SIGKILL)

    assert gone_within(server_pid), f"the MCP server (pid {server_pid}) outlived the {end}"
    if end == "unload":
        assert kernel.execute("x = 1 + 1").status == "ok", "the kernel lives on"
        assert server_pids(first) == []


def test_a_workspace_server_is_refused_headless_and_starts_once_trusted(start_kernel, tmp_path):
    write_config(tmp_path, file=".mcp.json")
    kernel, server = start_kernel(
        [reply("no server"), reply("", call("b__echo", text="hi")), reply("ok")]
    )
    headless = kernel.execute("%%copilot --yes\nhi")  # nbclient: no stdin, no widgets
    assert headless.status == "ok", headless.reply["content"]
    assert server_pids(kernel_pid(kernel)) == [], "nothing started"
    listing = kernel.execute("%copilot mcp")
    assert "b              refused: nobody could be asked to approve it" in shown(listing)
    assert "%copilot mcp trust b shows what it runs and asks" in shown(listing)

    msg_id = kernel.send("%copilot mcp trust b", allow_stdin=True)  # a console: input()
    asked = input_request(kernel, msg_id)
    assert asked["content"]["prompt"].startswith("MCP server b wants to start")
    kernel.client.input("y")
    trusted = kernel.collect(msg_id)
    assert trusted.status == "ok", trusted.reply["content"]
    assert f'"command": "{sys.executable}"' in trusted.stdout, "it showed what it runs"
    assert shown(trusted).split()[:2] == ["b", "running"]
    assert server_pids(kernel_pid(kernel)) != []

    echo_turn(kernel)
    assert list(server.requests[2].tool_results.values()) == ["echo: hi"]
