"""A run takes its settings as one object, resolved in layers over the agent's own: the agent
that keeps the conversation is never reconfigured by writing its attributes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from copilot_nb import Agent, RunSettings
from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.agent.session import CopilotSession
from copilot_nb.errors import ConfigError
from copilot_nb.events import Done, Failed
from copilot_nb.testing import ScriptedModel, call, reply
from copilot_nb.tools import ToolSet, tool


@tool
def shout(text: str) -> str:
    """Say it loud."""
    return text.upper()


async def test_a_runs_settings_hold_for_that_run_only(tmp_path):
    own = ScriptedModel([reply("second")], name="own")
    other = ScriptedModel([reply("", call("shout", text="hi")), reply("first")], name="other")
    agent = Agent(model=own, workspace=tmp_path, tools=ToolSet(), max_rounds=5)
    heard = []
    settings = RunSettings(
        model=other,
        tools=ToolSet([shout]),
        system_prompt="be brief",
        on_message=heard.append,
        request_options={"temperature": 0.25},
    )

    assert await agent.ask("one", settings=settings) == "first"
    (asked, answered) = other.requests
    assert asked.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert asked.body["temperature"] == 0.25 and [
        t["function"]["name"] for t in asked.body["tools"]
    ] == ["shout"]
    assert list(answered.tool_results.values()) == ["HI"]
    assert [m.role for m in heard] == ["user", "assistant", "tool", "assistant"]
    assert agent.active.model is other, "what a running tool (a subagent) follows"

    assert await agent.ask("two") == "second", "the next run is the agent's own again"
    (plain,) = own.requests
    assert "temperature" not in plain.body and "tools" not in plain.body
    assert plain.body["messages"][0]["content"] == agent.system_prompt
    assert agent.model is own and agent.max_rounds == 5 and len(heard) == 4


async def test_max_rounds_and_approvals_given_to_run_win_over_its_settings(tmp_path):
    model = ScriptedModel([reply("", call("shout", text="a")), reply("", call("shout", text="b"))])
    agent = Agent(model=model, workspace=tmp_path, tools=ToolSet([shout]))
    settings = RunSettings(max_rounds=5, approvals=ApprovalPolicy(read="deny"))
    events = [e async for e in agent.run("go", max_rounds=1, settings=settings)]
    assert isinstance(events[-1], Failed) and "after 1 rounds" in events[-1].error
    assert agent.active.approvals == ApprovalPolicy(read="deny") and agent.active.max_rounds == 1


def test_a_tool_time_limit_must_be_more_than_nothing():
    with pytest.raises(ConfigError, match="more than 0 seconds"):
        RunSettings(tool_timeout=0)
    assert RunSettings(tool_timeout=None).tool_timeout is None, "None: no limit"


async def test_a_turn_leaves_the_conversations_agent_as_it_was_built(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    models = {"first": ScriptedModel([], name="first"), "second": ScriptedModel([reply("hi")])}
    session = CopilotSession(SimpleNamespace(user_ns={}), resolve=models.__getitem__)
    session.toolset_factories = session.toolset_factories[:1]
    agent = session.agent_for(session.model("first"))
    built = (agent.model, agent.tools, agent.approvals, agent.max_rounds, agent.tool_timeout)
    session.max_rounds, session.tool_timeout = 3, 7.0

    yes = session.approvals.approve_changes()
    events = [e async for e in session.turn("hello", approver=None, model="second", approvals=yes)]

    assert isinstance(events[-1], Done) and events[-1].text == "hi"
    assert session.agent is agent and [m.role for m in agent.messages][1:] == ["user", "assistant"]
    assert (
        agent.model,
        agent.tools,
        agent.approvals,
        agent.max_rounds,
        agent.tool_timeout,
    ) == built
    run = agent.active
    assert (run.model, run.max_rounds, run.tool_timeout) == (models["second"], 3, 7.0)
    assert run.approvals.edit == "allow" and "delegate" in {t.name for t in run.tools}
    assert session.model_name() == "scripted", "the conversation's model is the last turn's"


def test_settings_resolve_field_by_field_each_later_layer_winning():
    first, second = ScriptedModel(name="first"), ScriptedModel(name="second")
    own = RunSettings(
        model=first,
        max_rounds=5,
        tool_timeout=30.0,
        request_options={"temperature": 0.1, "seed": 7},
    )
    turn = RunSettings(model=second, tool_timeout=None, request_options={"temperature": 0.5})

    run = own.resolve(turn, None, RunSettings(turn_label="the user's words"))

    assert (run.model, run.max_rounds, run.turn_label) == (second, 5, "the user's words")
    assert run.tool_timeout is None, "None is a setting (no limit), not a field left out"
    assert run.request_options == {"temperature": 0.5, "seed": 7}, "merged key by key"
    assert own.resolve() == own and own.max_rounds == 5, "resolving makes a new one"


async def test_a_runs_settings_are_the_one_shape_the_agent_reports(tmp_path):
    model = ScriptedModel([reply("hi")])
    agent = Agent(model=model, workspace=tmp_path, tools=ToolSet([shout]), max_rounds=4)
    assert isinstance(agent.active, RunSettings), "its own, before any run"
    assert (agent.active.model, agent.active.max_rounds) == (model, 4)
    await agent.ask("hello", settings=RunSettings(turn_label="greeting"))
    assert isinstance(agent.active, RunSettings) and agent.active.turn_label == "greeting"
    assert agent.active.tools.get("shout") is not None, "the agent's own fill what it left out"
