"""How far a turn may go, as the user chose it: *ask*, *plan* or *agent*.

A mode is decided before the model sees anything, so it is enforced by the tools offered, not by
the model's good will: in *ask* and *plan* only tools whose category is `read` (and `ask_user`)
are listed, and a call of anything else is the usual "unknown tool" result. The words the model
gets for each mode are in `prompt/system.py`. A *plan* turn ends with a question to the user
(the same `ApprovalNeeded` path as an edit, so cells, the panel, consoles and headless runs all
know how to ask it); an approved plan continues the turn in *agent* mode with the plan as its
request, and a plan the user revises (their words as the answer) is planned again.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING

from ...events import AgentEvent, ApprovalNeeded, Done, revision
from ...tools.registry import Tool
from ...tools.toolset import ToolSource
from ...tools.wrappers import FilteredToolSet
from .names import TurnMode

if TYPE_CHECKING:
    from ..loop.rounds import Agent
    from ..loop.run_settings import RunSettings


PLAN_TOOL = "approve_plan"
"""The name a plan's approval request carries (no tool of that name exists)."""
PLAN_CATEGORY = "plan"
"""The category a plan's approval request carries: shown as "Carry out this plan?"."""

RUN_PLAN = (
    "The user approved your plan. Carry it out now, step by step, in agent mode; "
    "verify as you go, and say at the end what was done and what was not.\n\nThe plan:\n\n{plan}"
)
"""The request of the agent-mode run that follows an approved plan."""


def offered_in(tool: Tool, mode: TurnMode) -> bool:
    """Whether a tool is offered in a mode: everything in *agent*; reads and questions else."""
    if mode == "agent":
        return True
    return (tool.category == "read" and tool.name != "delegate") or tool.name == "ask_user"


def tools_for_mode(tools: ToolSource, mode: TurnMode) -> ToolSource:
    """`tools` as a turn in `mode` may see them (a name filter over the same set)."""
    if mode == "agent":
        return tools
    names = [t.name for t in tools if offered_in(t, mode)]
    return FilteredToolSet(tools, available=[*names, "tool_search"])


def plan_question(plan: str, number: int = 1) -> ApprovalNeeded:
    """The question that ends a plan turn: carry out this plan in agent mode? (`number` counts
    the plans of one turn: each revision is asked anew, under its own id.)"""
    return ApprovalNeeded(
        call_id=f"plan-{number}",
        name=PLAN_TOOL,
        arguments={"plan": plan},
        summary="carry out this plan in agent mode (each change still asks as your settings say)",
        category=PLAN_CATEGORY,
        decision=asyncio.get_running_loop().create_future(),
    )


async def run_in_mode(
    agent: Agent,
    prompt: str,
    mode: TurnMode,
    settings_for: Callable[[TurnMode], RunSettings],
) -> AsyncGenerator[AgentEvent, None]:
    """One turn in `mode`, each run with `settings_for(mode)` (the mode's tools and
    instructions). A plan turn's answer becomes a question; approved, the turn goes on in agent
    mode with the plan as its request; revised, the user's words go to the model as their answer
    and it plans again; otherwise it ends with the plan (headless: the plan only)."""
    asked = prompt
    for number in itertools.count(1):
        plan: str | None = None
        async with aclosing(agent.run(prompt, settings=settings_for(mode))) as events:
            async for event in events:
                if mode == "plan" and isinstance(event, Done):
                    plan = event.text
                    break
                yield event
        if plan is None:
            return
        request = plan_question(plan, number)
        yield request
        approved, reason = await request.decision
        if approved:
            break
        changes = revision(reason)
        if changes is None:
            yield Done(text=plan)
            return
        prompt = changes
    carry_out = replace(settings_for("agent"), turn_label=asked)  # the user's words, not ours
    run = agent.run(RUN_PLAN.format(plan=plan), settings=carry_out)
    async with aclosing(run) as events:
        async for event in events:
            yield event
