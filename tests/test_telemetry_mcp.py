"""An MCP call made inside a traced turn carries the W3C `traceparent` of its `execute_tool`
span in `params._meta`, so the server's own spans join the turn's trace; the approval asked
for the call is recorded on that span."""

from __future__ import annotations

import json
import sys

import pytest

from copilot_nb.events import Done
from copilot_nb.telemetry import spans
from copilot_nb.testing import call, reply
from tests.helpers import REPO, events_of, results, session_for, write_config
from tests.otlp_receiver import OtlpReceiver

pytestmark = pytest.mark.external  # it starts an MCP server process


async def test_an_mcp_call_carries_its_spans_traceparent(
    serve, tmp_path, monkeypatch, stop_servers
):
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    write_config(
        root,
        t={
            "command": sys.executable,
            "args": ["-m", "tests.mcp_servers.trace_meta"],
            "cwd": str(REPO),
        },
    )
    server = serve([reply("", call("t__meta", id="call_meta")), reply("done")])
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        session = session_for(server, root, monkeypatch, stop_servers)
        events = await events_of(session, "what meta")
        assert isinstance(events[-1], Done)
        spans.shutdown()  # what is batched is sent now
        (tool,) = receiver.named("execute_tool t__meta")

    sent = json.loads(results(server.requests[1])[-1])
    version, trace_id, span_id, flags = sent["traceparent"].split("-")
    assert (version, trace_id, span_id) == ("00", tool.trace_id, tool.span_id)
    assert int(flags, 16) & 1  # sampled
    (decision,) = tool.events
    assert decision[1]["gen_ai.tool.call.decision"] == "allow"
    assert decision[1]["gen_ai.tool.call.decision.asked"] is True
