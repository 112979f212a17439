"""A turn is a list of stages, each saying what it adds (settings, event hooks, a tear-down);
the turn merges what they add in order and no stage writes into the turn. The session's turns
and the proxy's server-side runs go through the same stages."""

from __future__ import annotations

import dataclasses
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.agent.loop.run_settings import RunSettings
from copilot_nb.agent.stages import SERVED, TURN, questions
from copilot_nb.agent.turn import Adds, Turn, TurnNote, run_stages
from copilot_nb.events import AgentEvent, Done, Failed, Notice, TextDelta
from copilot_nb.testing import ScriptedModel, reply
from copilot_nb.tools import workspace_tools
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import Answering, events_of, scripted_session


def a_turn(approver: Any = None, **fields: Any) -> Turn:
    """A turn with no session behind it: the stages under test use none."""
    approver = approver if approver is not None else Answering()
    return Turn(prompt="p", model=ScriptedModel(), approver=approver, asker=approver, **fields)


async def test_each_stage_says_what_it_adds_and_the_turn_merges_them_in_order():
    said: list[str] = []

    def first(turn: Turn) -> Adds:  # a stage with nothing to show is a plain function
        said.append("enter first")
        return Adds(
            settings=RunSettings(max_rounds=3, turn_label="first"),
            exit=lambda: said.append("leave first"),
        )

    async def second(turn: Turn):
        said.append(f"enter second, {turn.settings.max_rounds} rounds so far")
        yield TurnNote(text="second")

        def louder(event: AgentEvent) -> list[Notice]:
            return [Notice(text="loud")] if isinstance(event, TextDelta) else []

        async def heard(event: Any) -> None:
            said.append(f"shown {type(event).__name__}")

        yield Adds(
            settings=RunSettings(turn_label="second"),
            prompt=turn.prompt + " (with a skill)",
            before=louder,
            after=heard,
            exit=lambda: said.append("leave second"),
        )

    async def last(turn: Turn):
        settings = turn.settings
        said.append(f"enter last: {turn.prompt}, {settings.turn_label}, {settings.max_rounds}")
        yield TextDelta(text="hi")
        yield Done(text="hi")

    turn = a_turn()
    async with aclosing(run_stages(turn, [first, second, last])) as events:
        shown = [type(e).__name__ async for e in events]

    assert shown == ["TurnNote", "Notice", "TextDelta", "Done"]
    assert said == [
        "enter first",
        "enter second, 3 rounds so far",
        "enter last: p (with a skill), second, 3",
        "shown Notice",
        "shown TextDelta",
        "shown Done",
        "leave second",
        "leave first",
    ]
    assert turn.settings == RunSettings() and turn.prompt == "p", "the turn asked is as it was"
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.prompt = "changed"  # type: ignore[misc]


async def test_a_stage_that_ends_the_turn_tears_down_what_was_entered_last_first():
    said: list[str] = []

    def stage(name: str, *, fail: bool = False):
        async def enter(turn: Turn):
            said.append(f"enter {name}")
            yield Adds(exit=lambda: said.append(f"leave {name}"))
            yield TurnNote(text=name)
            if fail:
                yield Failed(error=f"{name} failed")
                said.append("never: the turn ended")

        return enter

    def never(turn: Turn) -> Adds:
        raise AssertionError("a stage after the one that ended the turn is not entered")

    async with aclosing(run_stages(a_turn(), [stage("a"), stage("b", fail=True), never])) as run:
        shown = [e async for e in run]

    assert [type(e).__name__ for e in shown] == ["TurnNote", "TurnNote", "Failed"]
    assert said == ["enter a", "enter b", "leave b", "leave a"]


async def test_a_plan_carried_out_in_one_turn_assembles_its_tools_once(
    serve, tmp_path, monkeypatch
):
    server = serve([reply("1. write a.txt"), reply("done")])
    session = scripted_session(server, tmp_path, monkeypatch)
    built: list[Path] = []

    def files(workspace: Workspace) -> Any:
        built.append(workspace.root)
        return workspace_tools(workspace)

    session.toolset_factories = [files]
    session.agent_for(session.model())  # the conversation's agent, made before this turn
    built.clear()

    events = await events_of(session, "make a.txt", approver=Answering(), mode="plan")

    assert isinstance(events[-1], Done) and len(server.requests) == 2, "planned, carried out"
    assert len(built) == 1, "the plan's run and the agent's run filter the one set"


def test_the_proxys_server_side_runs_ask_through_the_turns_own_stage():
    assert questions in TURN and questions in SERVED
    assert TURN[-1] is not SERVED[-1], "a session's turn runs in its mode; the proxy's runs once"


async def test_questions_left_unanswered_are_denied_when_the_turn_ends():
    from copilot_nb.agent.approvals.approver import UNANSWERED
    from copilot_nb.events import ApprovalNeeded

    asked: list[ApprovalNeeded] = []

    async def asks(turn: Turn):
        import asyncio

        request = ApprovalNeeded(
            call_id="c1",
            name="write_file",
            arguments={},
            summary="x",
            category="edit",
            decision=asyncio.get_running_loop().create_future(),
        )
        asked.append(request)
        yield request
        yield Done(text="")

    turn = a_turn(approver=Answering(approve=None), standing=ApprovalPolicy())
    async with aclosing(run_stages(turn, [questions, asks])) as events:
        [e async for e in events]

    (request,) = asked
    assert request.decision.result() == (False, UNANSWERED)
