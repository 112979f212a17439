"""A turn's OpenTelemetry traces in a real kernel, sent to a real OTLP/HTTP receiver on loopback:
the turn, each model request and each tool call as the GenAI semantic conventions name them,
the tool's approval decision, one conversation id, and no message content by default."""

from __future__ import annotations

import json

import pytest

from copilot_nb.messages import Usage
from copilot_nb.testing import call, reply
from tests.helpers import wait_until
from tests.otlp_receiver import OtlpReceiver
from tests.patience import patient

pytestmark = pytest.mark.kernel

SECRET_WORDS = "the launch code is tangerine"
PROMPT = "what do the notes say about tangerine"


def test_a_turn_with_a_tool_call_exports_its_spans_without_content(serve, kernel_for, tmp_path):
    (tmp_path / "notes.txt").write_text(SECRET_WORDS + "\n")
    server = serve(
        [
            reply(
                "",
                call("read_file", id="call_notes", path="notes.txt"),
                usage=Usage(
                    input_tokens=120,
                    output_tokens=7,
                    raw={"prompt_tokens_details": {"cached_tokens": 100}},
                ),
            ),
            reply("They mention a launch code.", usage=Usage(input_tokens=150, output_tokens=9)),
        ]
    )
    with OtlpReceiver() as receiver:
        kernel = kernel_for(
            server, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="50"
        )
        turn = kernel.execute(f"%%copilot\n{PROMPT}")
        assert turn.status == "ok"
        wait_until(
            lambda: receiver.named("invoke_agent"), patient(20), what="the turn's span exported"
        )
        spans = list(receiver.spans)

    (agent,) = [s for s in spans if s.name == "invoke_agent copilot_nb"]
    chats = [s for s in spans if s.name == "chat scripted"]
    (tool,) = [s for s in spans if s.name == "execute_tool read_file"]
    assert len(chats) == 2
    assert agent.service == "copilot_nb"
    conversation = agent.attributes["gen_ai.conversation.id"]
    for span in (*chats, tool):
        assert span.trace_id == agent.trace_id and span.parent_id == agent.span_id
        assert span.attributes["gen_ai.conversation.id"] == conversation
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "copilot_nb"
    first = chats[0].attributes
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == "openai"
    assert first["gen_ai.request.model"] == "scripted"
    assert first["gen_ai.response.model"] == "scripted"
    assert first["gen_ai.usage.input_tokens"] == 120
    assert first["gen_ai.usage.output_tokens"] == 7
    assert first["gen_ai.usage.cache_read.input_tokens"] == 100
    assert first["gen_ai.usage.cache_creation.input_tokens"] == 0
    assert chats[1].attributes["gen_ai.usage.input_tokens"] == 150
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "read_file"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_notes"
    assert tool.events == (
        (
            "gen_ai.tool.call.decision",
            {
                "gen_ai.tool.call.id": "call_notes",
                "gen_ai.tool.call.decision": "allow",
                "gen_ai.tool.call.decision.asked": False,
            },
        ),
    )
    assert all("error.type" not in s.attributes for s in spans)

    exported = b"".join(receiver.bodies)
    assert b"tangerine" not in exported and PROMPT.encode() not in exported

    requests = server.requests
    assert [r.headers.get("x-litellm-trace-id") for r in requests] == [conversation] * 2
    parents = [r.headers["traceparent"].split("-") for r in requests]
    assert [(p[1], p[2]) for p in parents] == [(agent.trace_id, c.span_id) for c in chats]


def test_telemetry_off_imports_no_sdk_and_still_names_the_session(serve, kernel_for):
    server = serve([reply("Hello.")])
    kernel = kernel_for(server)
    assert kernel.execute("%%copilot\nhi").status == "ok"
    loaded = kernel.execute(
        "import sys; print(sorted(m for m in sys.modules if 'opentelemetry.sdk' in m))"
    )
    assert loaded.stdout.strip() == "[]"
    assert len(server.requests[0].headers["x-litellm-trace-id"]) == 32
    assert "traceparent" not in server.requests[0].headers
    json.dumps(server.requests[0].body)  # the request body is untouched
