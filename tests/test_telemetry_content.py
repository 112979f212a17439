"""Message content in a turn's spans: exported only when the user opts in, with secrets masked
as on every other path, and never when the administrator's policy says `"content": false`;
the policy's collector turns traces on with no variable set."""

from __future__ import annotations

from copilot_nb.events import Done
from copilot_nb.telemetry import CONTENT_VARIABLE, ENDPOINT_VARIABLES, spans
from copilot_nb.testing import call, reply
from tests import policy_files
from tests.helpers import events_of, scripted_session
from tests.otlp_receiver import OtlpReceiver

policy_file = policy_files.policy_file

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


async def traced_turn(serve, tmp_path, monkeypatch, receiver: OtlpReceiver) -> None:
    (tmp_path / "env.txt").write_text(f"OPENAI_API_KEY={KEY}\n")
    server = serve([reply("", call("read_file", path="env.txt")), reply(f"It holds {KEY}.")])
    session = scripted_session(server, tmp_path, monkeypatch)
    events = await events_of(session, f"is {KEY} in env.txt?")
    assert isinstance(events[-1], Done)
    spans.shutdown()  # what is batched is sent now
    assert receiver.named("invoke_agent")


async def test_content_opted_in_is_exported_masked(serve, tmp_path, monkeypatch, policy_file):
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv(CONTENT_VARIABLE, "true")
        await traced_turn(serve, tmp_path, monkeypatch, receiver)
    (agent,) = receiver.named("invoke_agent")
    assert "is <masked: 48 chars> in env.txt?" in agent.attributes["gen_ai.input.messages"]
    assert "It holds <masked: 48 chars>." in agent.attributes["gen_ai.output.messages"]
    (tool,) = receiver.named("execute_tool read_file")
    assert "env.txt" in tool.attributes["gen_ai.tool.call.arguments"]
    assert "gen_ai.tool.call.result" in tool.attributes
    assert KEY.encode() not in b"".join(receiver.bodies)


async def test_the_policys_collector_and_its_no_to_content_win(
    serve, tmp_path, monkeypatch, policy_file
):
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with OtlpReceiver() as receiver:
        policy_file({"telemetry": {"endpoint": receiver.url, "content": False}})
        monkeypatch.setenv(CONTENT_VARIABLE, "true")
        await traced_turn(serve, tmp_path, monkeypatch, receiver)
    names = sorted({span.name for span in receiver.spans})
    assert names == ["chat scripted", "execute_tool read_file", "invoke_agent copilot_nb"]
    for span in receiver.spans:
        assert not any(".messages" in key or ".call.arguments" in key for key in span.attributes)
        assert "gen_ai.tool.call.result" not in span.attributes
    assert b"env.txt" not in b"".join(receiver.bodies)
