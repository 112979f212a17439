"""`copilot-nb acp` with real programs beyond a kernel: an MCP server an editor passes with
its session (the reference time server from the package index)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from copilot_nb.testing import call, reply
from tests.acp_client import Editor, agent_for

pytestmark = pytest.mark.external

acp = pytest.importorskip("acp")
pytest.importorskip("mcp_server_time")


async def test_an_mcp_server_the_editor_passes_asks_before_it_starts_then_serves(
    serve, tmp_path: Path
) -> None:
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
