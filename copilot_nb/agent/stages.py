"""The stages of a turn, in the order `TURN` enters them (see `turn.py`).

Each owns one concern of a turn and says what it adds (`Adds`): one turn at a time, the
cassette, a new conversation, the budgets and traces its requests pass, the workspace's MCP servers, the questions left unanswered, the
agent and its tools, `@` references, skills named up front, the model, review, saving, the
kernel variables its answers name, and last the loop in the turn's mode. A stage with nothing to
show is a plain function; one that shows events on the way is an async generator.
`SERVED` is the proxy's server-side run: the same questions stage, then one run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable
from contextlib import aclosing
from typing import Union

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
from .approvals.approver import UNANSWERED
from .approvals.cassette import CassetteApprover
from .loop.rounds import BUSY
from .loop.run_settings import RunSettings
from .model_strings import turn_note
from .modes.names import TurnMode
from .modes.review import edit_setting, fallback_note, fallback_said, list_file, resolved
from .modes.run import run_in_mode, tools_for_mode
from .prompt.assembly import prepare
from .prompt.references import attach_references
from .skills.tool import TOOL_NAME, SkillContext, load_skill
from .turn import NOTHING, Adds, After, Stage, Turn, TurnEvent, TurnNote, current_dir
from .watching import watch_for, with_budget_note

Shows = AsyncGenerator[Union[TurnEvent, Adds], None]
"""A stage that shows events on the way to what it adds."""


async def one_at_a_time(turn: Turn) -> Shows:
    """A second turn while one runs (a cell and the panel) ends at once, saying so."""
    host = turn.the_host()
    if host.busy:  # checked and set with no await between
        yield Failed(error=BUSY)
        return
    host.turning = True
    yield Adds(exit=lambda: setattr(host, "turning", False))


async def cassette(turn: Turn) -> Shows:
    """The cassette the turn records to or replays from; a replay answers as recorded."""
    try:
        recording = turn.the_host().cassette()
    except CassetteMismatch as exc:
        yield Failed(error=str(exc))
        return
    if recording is not None:
        recording.mark()
        endpoint = turn.model.endpoint  # its requests: recorded to, or replayed from, it
        yield Adds(
            cassette=recording,
            approver=CassetteApprover(turn.approver, recording),
            exit=endpoint.tape_with(recording) if endpoint is not None else None,
        )


def conversation(turn: Turn) -> Adds:
    """`new` forgets the conversation first."""
    if turn.new:
        turn.the_host().reset()
    return NOTHING


async def watched(turn: Turn) -> Shows:
    """The administrator's budgets, checked before each request leaves (a spent one ends the
    turn before anything is sent) and counted after each reply; the turn's OpenTelemetry spans
    while telemetry is on; the conversation's id on each request for a LiteLLM gateway."""
    watch = watch_for(turn.host, turn.model, new=turn.new, prompt=turn.text())
    endpoint = turn.model.endpoint
    yield Adds(
        before=with_budget_note(watch),
        exit=endpoint.outgoing_with(watch) if endpoint is not None else watch.end,
    )
    if endpoint is not None:
        yield Adds(exit=watch.end)  # torn down first: the spans end, then the hook goes
    if refusal := watch.refusal():
        yield Failed(error=refusal)


async def servers(turn: Turn) -> Shows:
    """The workspace's MCP servers: each new one asked about (by a person), then started."""
    mcp = turn.the_host().mcp
    mcp.configure(current_dir())
    async with aclosing(mcp.launches(turn.standing.external, turn.asker.answer)) as asked:
        async for question in asked:
            yield question
    await mcp.start()


def questions(turn: Turn) -> Adds:
    """Each question goes to the turn's approver once a surface has shown it; those nobody
    answered are denied when the turn ends, however it ends."""
    approver, asked = turn.approver, list[ApprovalNeeded]()

    def note(event: AgentEvent) -> Iterable[TurnEvent]:
        if isinstance(event, ApprovalNeeded):
            asked.append(event)  # before it is shown: a turn closed then still denies it
        return ()

    async def answer(event: TurnEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            approver.answer(event)

    def deny_unanswered() -> None:
        for request in asked:
            if not request.answered:
                request.deny(UNANSWERED)

    return Adds(before=note, after=answer, exit=deny_unanswered)


def agent(turn: Turn) -> Adds:
    """The conversation's agent in the current directory, and what its run uses: the model,
    the tools for this model and agent (assembled once a turn), the round and time limits."""
    host = turn.the_host()
    the_agent = host.agent_for(turn.model)
    host.mcp.asker = the_agent  # a server's question goes out through the running call
    return Adds(
        agent=the_agent,
        settings=RunSettings(
            model=turn.model,
            tools=host.tools_for(the_agent.workspace, the_agent, model=turn.model),
            max_rounds=turn.max_rounds or host.max_rounds,
            tool_timeout=host.tool_timeout,
        ),
        exit=lambda: setattr(host.mcp, "asker", None),
    )


async def references(turn: Turn) -> Shows:
    """`@path`, `@cell:` and `@var:` attached through the read tools, before anything is sent."""
    workspace, tools = turn.the_agent().workspace, turn.settings.tools
    try:
        prompt = await attach_references(turn.text(), workspace, tools)
    except ConfigError as exc:
        yield Failed(error=str(exc))
        return
    yield Adds(prompt=prompt)


async def skills(turn: Turn) -> Shows:
    """`--skill NAME`: each skill's body added to the request before anything is sent, shown
    as the `load_skill` call the model would have made; a skill not offered ends the turn."""
    context = SkillContext(workspace=turn.the_agent().workspace)
    prompt = turn.text()
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
        prompt += f"\n\nThe user chose this skill for the request:\n{output.content}"
        yield ToolFinished(
            call_id=call_id, name=TOOL_NAME, ok=True, summary=output.summary, content=""
        )
    if turn.skills:
        yield Adds(prompt=prompt)


async def model_note(turn: Turn) -> Shows:
    """What the model's provider says first, if its row has a note: the offline demo says
    what it is."""
    if note := turn_note(turn.model):
        yield TurnNote(text=note)


async def review(turn: Turn) -> Shows:
    """`review` resolved for this turn (a live notebook attached: allow and review, else ask);
    the files the turn changes are listed in the notebook's review."""
    host = turn.the_host()
    live = host.live
    if live is not None and edit_setting(turn.standing) == "review":
        await live.attach_soon()  # "Run All": the page may attach a moment later
    approvals, reviewing = resolved(turn.standing, live)
    listed: After | None = None
    if live is not None and reviewing:
        workspace = turn.the_agent().workspace

        async def list_changed(event: TurnEvent) -> None:
            if isinstance(event, (FileChanged, CellChanged)):
                await list_file(live, host.shell, workspace, event)

        listed = list_changed

    if live is not None:
        live.review.begin(reviewing)
    yield Adds(
        settings=RunSettings(approvals=approvals),
        after=listed,
        exit=live.review.end if live is not None else None,
    )
    if not host.review_fallback_said and fallback_said(turn.standing, live, host.shell):
        host.review_fallback_said = True  # once per kernel: it holds until one attaches
        yield TurnNote(text=fallback_note(live))


def saving(turn: Turn) -> Adds:
    """The turn written down as it goes (not while a cassette is the record); a notice, once,
    when saving stopped."""
    saved, the_agent = turn.the_host().saved, turn.the_agent()
    recorder = saved.begin(turn.text(), cassette=turn.cassette is not None)

    def observe(event: AgentEvent) -> Iterable[TurnEvent]:
        saved.observe(the_agent, event)
        notice = saved.notice() if recorder is not None else None
        return (notice,) if notice is not None else ()

    return Adds(
        settings=RunSettings(on_message=recorder.message) if recorder is not None else None,
        before=observe,
        exit=lambda: saved.end(the_agent),
    )


def named(turn: Turn) -> Adds:
    """The kernel variables the turn's answers name become the conversation's, so a restart
    that loses them is said; heard before `saving` writes the turn down."""
    shell = turn.the_host().shell
    if shell is None:
        return NOTHING
    said: list[str] = []
    heard = 0

    def hear(event: AgentEvent) -> Iterable[TurnEvent]:
        nonlocal heard
        if isinstance(event, TextDelta) and heard < MAX_ANSWER_CHARS:
            said.append(event.text)
            heard += len(event.text)
        return ()

    def note() -> None:
        kernel_state(shell).named("".join(said), user_namespace(shell), hidden_names(shell))

    return Adds(before=hear, exit=note)


async def loop(turn: Turn) -> Shows:
    """The agent's run in the turn's mode; a plan turn becomes an agent turn once approved,
    with that mode's tools (filtered from the turn's one set) and instructions."""
    host, the_agent, tools = turn.the_host(), turn.the_agent(), turn.settings.tools

    def settings_for(mode: TurnMode) -> RunSettings:
        prompt = prepare(the_agent.workspace, turn.model, host.shell, host.live, mode=mode)
        return turn.settings.resolve(
            prompt,
            RunSettings(
                tools=tools_for_mode(tools, mode),
                tool_updates=lambda: host.tool_changes(the_agent, turn.model, mode),
            ),
        )

    run = run_in_mode(the_agent, turn.text(), turn.mode, settings_for)
    async with aclosing(run) as events:
        async for event in events:
            yield event


async def run(turn: Turn) -> Shows:
    """The agent's one run with the turn's settings (the proxy's server-side turn)."""
    answering = turn.the_agent().run(turn.prompt, settings=turn.settings)
    async with aclosing(answering) as events:
        async for event in events:
            yield event


TURN: tuple[Stage, ...] = (
    one_at_a_time,
    cassette,
    conversation,
    watched,
    servers,
    questions,
    agent,
    references,
    skills,
    model_note,
    review,
    saving,
    named,
    loop,
)
"""A session's turn, stage by stage, in the order they are entered (and torn down in reverse)."""

SERVED: tuple[Stage, ...] = (watched, questions, run)
"""The proxy's server-side turn (`tool_execution: "auto"`): its agent and settings come with
the turn; its budget and trace as a session's; questions go to the notebook that started it,
or are denied."""
