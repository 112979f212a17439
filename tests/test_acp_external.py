"""`copilot-nb acp` with real programs beyond a kernel: an MCP server an editor passes with
its session (the reference time server from the package index), and jupyter-ai's own ACP client
hosting it as a persona (in a venv of its own: it pins an older SDK)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_nb.testing import call, reply
from tests.acp_client import Editor, agent_for
from tests.kernel_session import scripted_env
from tests.patience import patient

pytestmark = pytest.mark.external

acp = pytest.importorskip("acp")


async def test_an_mcp_server_the_editor_passes_asks_before_it_starts_then_serves(
    serve, tmp_path: Path
) -> None:
    pytest.importorskip("mcp_server_time")
    from acp.schema import McpServerStdio

    server = serve(
        [
            reply(
                "",
                call(
                    "time__convert_time",
                    id="t",
                    source_timezone="UTC",
                    time="12:00",
                    target_timezone="Asia/Tokyo",
                ),
            ),
            reply("It is 21:00 in Tokyo."),
        ]
    )
    time_server = McpServerStdio(
        name="time", command=sys.executable, args=["-m", "mcp_server_time"], env=[]
    )
    editor = Editor()
    editor.answers = ["allow_once", "allow_once"]
    config = tmp_path / "config"
    async with agent_for(server, tmp_path, editor, COPILOT_NB_CONFIG_DIR=str(config)) as conn:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[time_server])
        await conn.prompt(session_id=session.session_id, prompt=[_text("noon UTC in Tokyo?")])

    launch, use = editor.asked
    assert "time" in launch.title
    assert use.tool_call_id == "t"
    converted = json.loads(server.requests[1].tool_results["t"])
    assert "T21:00:00" in converted["target"]["datetime"]
    assert editor.text().endswith("It is 21:00 in Tokyo.")


async def test_an_mcp_server_refused_at_launch_never_starts(serve, tmp_path: Path) -> None:
    from acp.schema import McpServerStdio

    marker = tmp_path / "started"
    server = serve([reply("No server, no tools.")])
    script = f"open({str(marker)!r}, 'w').close()"
    editor = Editor()
    editor.answers = ["reject_once"]
    async with agent_for(server, tmp_path, editor) as conn:
        await conn.initialize(protocol_version=1)
        launched = McpServerStdio(name="x", command=sys.executable, args=["-c", script], env=[])
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[launched])
        await conn.prompt(session_id=session.session_id, prompt=[_text("hi")])
    assert len(editor.asked) == 1
    assert not marker.exists()


def _text(text: str):  # type: ignore[no-untyped-def]
    return acp.text_block(text)


JUPYTER_AI_ACP = "jupyter-ai-acp-client==0.3.3"
"""jupyter-ai's ACP client: it pins agent-client-protocol 0.11, so it gets a venv of its own."""
JUPYTER_AI = Path(__file__).parent / "jupyter_ai"


@pytest.fixture(scope="session")
def jupyter_ai_python() -> Path:
    """The Python of a venv with jupyter-ai's ACP client, built once under build/ and kept."""
    venv = Path(__file__).resolve().parent.parent / "build" / "jupyter-ai-acp-venv"
    python = venv / "bin" / "python"
    stamp = venv / f".{JUPYTER_AI_ACP}"
    if not stamp.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", JUPYTER_AI_ACP],
            capture_output=True,
            text=True,
        )
        if installed.returncode != 0:
            pytest.skip(f"{JUPYTER_AI_ACP} could not be installed: {installed.stderr[-400:]}")
        stamp.touch()
    return python


def test_jupyter_ai_hosts_copilot_nb_as_a_persona_and_gets_its_answer(
    serve, tmp_path: Path, jupyter_ai_python: Path
) -> None:
    server = serve([reply("Hello from the notebook agent.")])
    personas = tmp_path / ".jupyter" / "personas"
    personas.mkdir(parents=True)
    shutil.copy(JUPYTER_AI / "copilot_nb_persona.py", personas)
    env = {
        **os.environ,
        **scripted_env(server),
        "COPILOT_NB_ACP_COMMAND": json.dumps([sys.executable, "-m", "copilot_nb", "acp"]),
    }
    chat = subprocess.run(
        [str(jupyter_ai_python), str(JUPYTER_AI / "drive.py"), str(tmp_path), "say hello"],
        env=env,
        capture_output=True,
        text=True,
        timeout=patient(120),
    )
    assert chat.returncode == 0, chat.stderr[-2000:]
    messages = [json.loads(line) for line in chat.stdout.splitlines() if line.startswith("{")]
    [answer] = [m for m in messages if m["sender"] != "user"]
    assert answer["sender"].endswith("CopilotNbPersona")
    assert answer["body"] == "Hello from the notebook agent."
    [request] = server.requests
    assert "say hello" in str(request.messages[-1]["content"])
