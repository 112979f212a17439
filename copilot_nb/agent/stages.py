"""The stages of a turn, in the order `TURN` enters them (see `turn.py`).

Each owns one concern of a turn, its set-up and its tear-down: one turn at a time, the questions
left unanswered, the cassette, a new conversation, the workspace's MCP servers, the agent and
its tools, `@` references, skills named up front, the model, review, saving, the kernel
variables its answers name, and last the loop in the turn's mode.
A stage that shows nothing ends in `return; yield` (still an async generator, as `Stage` wants).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace

from ..errors import ConfigError, ToolError
from ..events import (
    AgentEvent,
    ApprovalNeeded,
    CellChanged,
    Failed,
    FileChanged,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from ..kernel_bridge import hidden_names, user_namespace
from ..models.cassettes.cassette import CassetteMismatch
from ..tools.kernel.state import MAX_ANSWER_CHARS, kernel_state
from .approvals.cassette import CassetteApprover
from .loop import BUSY
from .modes.names import TurnMode
from .modes.review import edit_setting, fallback_note, fallback_said, list_file, resolved
from .modes.run import run_in_mode, tools_for_mode
from .prompt.assembly import prepare
from .prompt.references import attach_references
from .run_settings import RunSettings
from .skills.tool import TOOL_NAME, SkillContext, load_skill
from .turn import Stage, Turn, TurnEvent, TurnNote, current_dir


async def one_at_a_time(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """A second turn while one runs (a cell and the panel) ends at once, saying so."""
    host = turn.host
    if host.busy:  # checked and set with no await between
        yield Failed(error=BUSY)
        return
    host.turning = True
    turn.stack.callback(setattr, host, "turning", False)


async def questions(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """Each question goes to the approver once a surface has shown it; unanswered ones are
    denied when the turn ends."""

    def note(event: AgentEvent) -> list[TurnEvent]:
        if isinstance(event, ApprovalNeeded):
            turn.asked.append(event)
        return []

    async def answer(event: AgentEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            turn.approver.answer(event)

    turn.before.append(note)
    turn.after.append(answer)
    turn.stack.callback(turn.deny_unanswered)
    return
    yield


async def cassette(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The cassette the turn records to or replays from; a replay answers as recorded."""
    try:
        turn.cassette = turn.host.cassette()
    except CassetteMismatch as exc:
        yield Failed(error=str(exc))
        return
    if turn.cassette is not None:
        turn.cassette.mark()
        turn.approver = CassetteApprover(turn.approver, turn.cassette)


async def conversation(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """`new` forgets the conversation first."""
    if turn.new:
        turn.host.reset()
    return
    yield


async def servers(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The workspace's MCP servers: each new one asked about (by a person), then started."""
    mcp = turn.host.mcp
    mcp.configure(current_dir())
    async with aclosing(mcp.launches(turn.standing.external, turn.asker.answer)) as asked:
        async for question in asked:
            yield question
    await mcp.start()


async def agent(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The conversation's agent in the current directory, and what its run uses: the model,
    the tools for this model and agent, the round and time limits."""
    host = turn.host
    turn.agent = host.agent_for(turn.model)
    turn.settings = replace(
        turn.settings,
        model=turn.model,
        tools=host.tools_for(turn.agent.workspace, turn.agent, model=turn.model),
        max_rounds=turn.settings.max_rounds or host.max_rounds,
        tool_timeout=host.tool_timeout,
    )
    host.mcp.asker = turn.agent  # a server's question goes out through the running call
    turn.stack.callback(setattr, host.mcp, "asker", None)
    return
    yield


async def references(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """`@path`, `@cell:` and `@var:` attached through the read tools, before anything is sent."""
    workspace, tools = turn.the_agent().workspace, turn.settings.tools
    assert tools is not None
    try:
        turn.prompt = await attach_references(turn.prompt, workspace, tools)
    except ConfigError as exc:
        yield Failed(error=str(exc))


async def skills(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """`--skill NAME`: each skill's body added to the request before anything is sent, shown
    as the `load_skill` call the model would have made; a skill not offered ends the turn."""
    context = SkillContext(workspace=turn.the_agent().workspace)
    for index, name in enumerate(turn.skills):
        call_id = f"skill-{index}"
        yield ToolStarted(call_id=call_id, name=TOOL_NAME, arguments={"name": name}, summary=name)
        try:
            output = load_skill(context, name)
        except ToolError as exc:
            yield ToolFinished(
                call_id=call_id, name=TOOL_NAME, ok=False, summary=str(exc), content=str(exc)
            )
            yield Failed(error=f"--skill {name}: {exc}")
            return
        turn.prompt += f"\n\nThe user chose this skill for the request:\n{output.content}"
        yield ToolFinished(
            call_id=call_id, name=TOOL_NAME, ok=True, summary=output.summary, content=""
        )


async def model_note(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The offline demo model says what it is."""
    if getattr(turn.model, "offline", False):
        from ..offline import OFFLINE_NOTE

        yield TurnNote(text=OFFLINE_NOTE)


async def review(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """`review` resolved for this turn (a live notebook attached: allow and review, else ask);
    the files the turn changes are listed in the notebook's review."""
    host, live = turn.host, turn.host.live
    if live is not None and edit_setting(turn.standing) == "review":
        await live.attach_soon()  # "Run All": the page may attach a moment later
    approvals, reviewing = resolved(turn.standing, live)
    turn.settings = replace(turn.settings, approvals=approvals)
    if live is not None:
        live.review.begin(reviewing)
        turn.stack.callback(live.review.end)
    if not host.review_fallback_said and fallback_said(turn.standing, live, host.shell):
        host.review_fallback_said = True  # once per kernel: it holds until one attaches
        yield TurnNote(text=fallback_note(live))
    if reviewing:
        workspace = turn.the_agent().workspace

        async def listed(event: AgentEvent) -> None:
            if isinstance(event, (FileChanged, CellChanged)):
                await list_file(live, host.shell, workspace, event)

        turn.after.append(listed)


async def saving(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The turn written down as it goes (not while a cassette is the record); a notice, once,
    when saving stopped."""
    saved, the_agent = turn.host.saved, turn.the_agent()
    recorder = saved.begin(turn.prompt, cassette=turn.cassette is not None)
    turn.stack.callback(saved.end, the_agent)
    if recorder is not None:
        turn.settings = replace(turn.settings, on_message=recorder.message)

    def observe(event: AgentEvent) -> list[TurnEvent]:
        saved.observe(the_agent, event)
        notice = saved.notice() if recorder is not None else None
        return [notice] if notice is not None else []

    turn.before.append(observe)
    return
    yield


async def named(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The kernel variables the turn's answers name become the conversation's, so a restart
    that loses them is said; heard before `saving` writes the turn down."""
    shell = turn.host.shell
    if shell is None:
        return
    said: list[str] = []
    heard = 0

    def hear(event: AgentEvent) -> list[TurnEvent]:
        nonlocal heard
        if isinstance(event, TextDelta) and heard < MAX_ANSWER_CHARS:
            said.append(event.text)
            heard += len(event.text)
        return []

    def note() -> None:
        kernel_state(shell).named("".join(said), user_namespace(shell), hidden_names(shell))

    turn.before.append(hear)
    turn.stack.callback(note)
    return
    yield


async def loop(turn: Turn) -> AsyncGenerator[TurnEvent, None]:
    """The agent's run in the turn's mode, each event through the stages' hooks; a plan turn
    becomes an agent turn once approved, with that mode's tools and instructions."""
    host, the_agent = turn.host, turn.the_agent()
    turn.stack.callback(setattr, host, "turn_mode", "agent")

    def settings_for(mode: TurnMode) -> RunSettings:
        host.turn_mode = mode
        tools = host.tools_for(the_agent.workspace, the_agent, model=turn.model)
        prompt = prepare(the_agent.workspace, turn.model, host.shell, host.live, mode=mode)
        return replace(
            turn.settings,
            tools=tools_for_mode(tools, mode),
            system_prompt=prompt.system_prompt,
            context_block=prompt.context_block,
            tool_updates=lambda: host.tool_changes(the_agent, turn.model, mode),
        )

    run = run_in_mode(the_agent, turn.prompt, turn.mode, settings_for)
    async with aclosing(run) as events:
        async for event in events:
            for hook in turn.before:
                for note in hook(event):
                    yield note
            yield event
            for after in turn.after:
                await after(event)


TURN: tuple[Stage, ...] = (
    one_at_a_time,
    questions,
    cassette,
    conversation,
    servers,
    agent,
    references,
    skills,
    model_note,
    review,
    saving,
    named,
    loop,
)
"""A turn, stage by stage, in the order they are entered (and torn down in reverse)."""
