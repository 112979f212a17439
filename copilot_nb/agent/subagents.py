"""Subagents: the agent hands a task to a child agent with its own context window, tools and
instructions, and gets back the child's final answer (not its transcript).

The `delegate` tool starts the child on the same model (or the one its definition names), with a
restricted tool list (read-only by default), a round limit and its own system prompt. The
child's tool calls, approval requests and usage go out through the parent's run (`Agent.emit`),
marked with the parent's call id, so the cell and the panel show them under the `delegate` line,
the user answers the child's questions where they answer the parent's, and the child's requests
count in the conversation's tokens (they are billed). Interrupting the parent
cancels the `delegate` call, which closes the child's run. Children may delegate again down to
`MAX_DEPTH`.

Custom agents are Markdown files, `.copilot_nb/agents/NAME.md`: front matter (`description`,
`tools` as a list of tool names, `model`, `max_rounds`) between `---` lines, then the body as the
child's instructions. `explore` (read-only, for looking things up) is built in.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..events import (
    ApprovalNeeded,
    CellChanged,
    Done,
    Failed,
    FileChanged,
    ToolFinished,
    ToolStarted,
    UsageReported,
)
from ..models.base import Model
from ..tools.registry import Tool, ToolOutput, ToolSet
from ..tools.schemas.check import own_schema
from ..tools.toolset import ToolSource
from ..workspace.workspace import Workspace

AGENTS_DIR = ".copilot_nb/agents"
MAX_DEPTH = 2
DEFAULT_ROUNDS = 8
EXPLORE = """\
You are a subagent of a coding agent working in a Jupyter notebook's project. You were given one
task: do it with your tools (they only read), then answer with what you found: facts, paths and
line numbers, short. Your answer is all the parent agent will see of your work."""


@dataclass(frozen=True, kw_only=True)
class AgentDefinition:
    """A kind of subagent: what it is for, its tools, its model and its instructions."""

    name: str
    description: str
    instructions: str
    tools: tuple[str, ...] | None = None
    """Tool names it may use; None: every read-only tool of the parent."""
    model: str | None = None
    max_rounds: int = DEFAULT_ROUNDS
    source: str = "built in"


BUILT_IN = AgentDefinition(
    name="explore",
    description="Looks things up without changing anything: reads files, cells and variables, "
    "searches, and answers with what it found.",
    instructions=EXPLORE,
)


def agent_definitions(workspace: Workspace) -> dict[str, AgentDefinition]:
    """The built-in agent and the workspace's own, by name (a file may replace `explore`)."""
    found = {BUILT_IN.name: BUILT_IN}
    try:
        entries = workspace.list_dir(AGENTS_DIR) if workspace.exists(AGENTS_DIR) else []
    except (OSError, ConfigError):
        entries = []
    for entry in entries:
        if entry.name.endswith(".md") and not entry.is_dir:
            relative = f"{AGENTS_DIR}/{entry.name}"
            found[entry.name[:-3]] = parse_definition(
                entry.name[:-3], workspace.read_text(relative), source=relative
            )
    return found


def parse_definition(name: str, text: str, *, source: str) -> AgentDefinition:
    """A definition file: `---` front matter of `key: value` lines, then the instructions."""
    fields: dict[str, str] = {}
    body = text
    match = re.match(r"\A---\s*\n(.*?)\n---\s*\n?(.*)\Z", text, re.DOTALL)
    if match:
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        body = match.group(2)
    tools = fields.get("tools")
    rounds = fields.get("max_rounds", "")
    return AgentDefinition(
        name=name,
        description=fields.get("description", "") or f"the {name} agent of this workspace",
        instructions=body.strip() or EXPLORE,
        tools=tuple(t.strip(" '\"") for t in tools.strip("[]").split(",") if t.strip(" '\""))
        if tools
        else None,
        model=fields.get("model") or None,
        max_rounds=int(rounds) if rounds.isdigit() and int(rounds) > 0 else DEFAULT_ROUNDS,
        source=source,
    )


def child_tools(parent: ToolSource, definition: AgentDefinition) -> ToolSet:
    """The parent's tools the child may use: the named ones, else every `read` tool."""
    if definition.tools is None:
        return ToolSet(t for t in parent if t.category == "read" and t.name != "delegate")
    return ToolSet(t for t in parent if t.name in definition.tools and t.name != "delegate")


def delegate_tool(
    parent: Any,
    *,
    resolve: Callable[[str], Model],
    depth: int = 1,
) -> Tool:
    """The `delegate` tool of an agent (`parent`, an `Agent`): children run under its run."""
    definitions = agent_definitions(parent.workspace)
    listed = "\n".join(f"- {d.name}: {d.description}" for d in definitions.values())

    async def delegate(task: str, agent: str = "explore", time_limit: int = 600) -> ToolOutput:
        from .loop.rounds import Agent

        definition = agent_definitions(parent.workspace).get(agent)
        if definition is None:
            raise ConfigError(f"no agent named {agent!r}; agents: {', '.join(definitions)}")
        run = parent.active  # the parent's run: its model, tools and approvals
        model = resolve(definition.model) if definition.model else run.model
        tools = child_tools(run.tools, definition)
        child = Agent(
            model=model,
            workspace=parent.workspace,
            tools=tools,
            system_prompt=definition.instructions,
            max_rounds=definition.max_rounds,
            approvals=run.approvals,
            tool_timeout=run.tool_timeout,
        )
        if depth < MAX_DEPTH:
            tools.add(delegate_tool(child, resolve=resolve, depth=depth + 1))
        return await _run_child(parent, child, task, call_id=parent.current_call_id)

    return Tool(
        name="delegate",
        description="Hand a self-contained task to a subagent with its own context window and "
        "get back its final answer (not its transcript). Use it for research that would fill "
        f"your context (reading many files, searching). Agents:\n{listed}",
        parameters=own_schema(
            {
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "what to do, with all it needs"},
                    "agent": {"type": "string", "enum": sorted(definitions)},
                    "time_limit": {
                        "type": "integer",
                        "description": "seconds the subagent may work (default 600)",
                    },
                },
                "required": ["task"],
                "additionalProperties": False,
            }
        ),
        function=delegate,
        category="read",
        on_request=True,
        timeout_argument="time_limit",
    )


async def _run_child(parent: Any, child: Any, task: str, *, call_id: str) -> ToolOutput:
    """Run the child; its calls, changes and questions go out marked with `call_id`."""
    answer, failure, calls = "", "", 0
    async with aclosing(child.run(task)) as events:
        async for event in events:
            if isinstance(event, (ToolStarted, ToolFinished, ApprovalNeeded)):
                calls += isinstance(event, ToolStarted)
                parent.emit(
                    dataclasses.replace(event, call_id=f"{call_id}/{event.call_id}", parent=call_id)
                )
            elif isinstance(event, (FileChanged, CellChanged)):
                parent.emit(event)
            elif isinstance(event, UsageReported):
                under = f"{call_id}/{event.parent}" if event.parent else call_id
                parent.emit(dataclasses.replace(event, parent=under))
            elif isinstance(event, Done):
                answer = event.text
            elif isinstance(event, Failed):
                failure = event.error
    if failure:
        return ToolOutput(
            content=f"the subagent stopped: {failure}", is_error=True, summary="failed"
        )
    return ToolOutput(content=answer or "(no answer)", summary=f"answered after {calls} tool calls")
