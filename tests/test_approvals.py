"""Approvals: edits ask, the user answers, and a denial is a result the model reads."""

from __future__ import annotations

import pytest

from copilot_nb import Agent, ConfigError
from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.events import ApprovalNeeded, Done, ToolFinished
from copilot_nb.testing import call, reply


def edit_script():
    return [
        reply(
            "",
            call("write_file", id="w1", path="notes.txt", content="hello\n"),
            call("read_file", id="r1", path="notes.txt"),
        ),
        reply("Finished."),
    ]


async def run_answering(agent: Agent, prompt: str, answer):
    events = []
    async for event in agent.run(prompt):
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            answer(event)
    return events


async def test_an_approved_edit_runs(serve, tmp_path):
    server = serve(edit_script())
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=ApprovalPolicy())
    events = await run_answering(agent, "write it", lambda e: e.approve())
    (asked,) = [e for e in events if isinstance(e, ApprovalNeeded)]
    assert (asked.name, asked.category, asked.summary) == ("write_file", "edit", "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    assert isinstance(events[-1], Done)


async def test_a_denied_edit_is_a_result_the_model_reads(serve, tmp_path):
    server = serve(edit_script())
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=ApprovalPolicy())
    events = await run_answering(agent, "write it", lambda e: e.deny("not today"))
    assert not (tmp_path / "notes.txt").exists()
    finished = {e.call_id: e for e in events if isinstance(e, ToolFinished)}
    assert finished["w1"].ok is False and finished["w1"].summary == "denied"
    results = {
        m["tool_call_id"]: m["content"] for m in server.requests[1].messages if m["role"] == "tool"
    }
    assert "the user denied this call: not today" in results["w1"]
    assert "does not exist" in results["r1"]


async def test_deny_policy_and_read_only_never_ask(serve, tmp_path):
    server = serve(edit_script())
    policy = ApprovalPolicy().read_only()
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=policy)
    events = [e async for e in agent.run("write it")]
    assert not any(isinstance(e, ApprovalNeeded) for e in events)
    results = {
        m["tool_call_id"]: m["content"] for m in server.requests[1].messages if m["role"] == "tool"
    }
    assert "denied by the approval policy" in results["w1"]


async def test_agent_ask_denies_what_would_need_a_user(serve, tmp_path):
    server = serve(edit_script())
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=ApprovalPolicy())
    assert await agent.ask("write it") == "Finished."
    assert not (tmp_path / "notes.txt").exists()


def test_policy_decisions_and_validation():
    policy = ApprovalPolicy(tools={"write_file": "allow", "list_directory": "deny"})
    assert policy.decide("read_file", "read") == "allow"
    assert policy.decide("edit_file", "edit") == "ask"
    assert policy.decide("run_code", "execute") == "ask"
    assert policy.decide("write_file", "edit") == "allow"
    assert policy.decide("list_directory", "read") == "deny"
    assert policy.read_only().decide("write_file", "edit") == "deny"
    with pytest.raises(ConfigError):
        ApprovalPolicy(edit="maybe")  # type: ignore[arg-type]
