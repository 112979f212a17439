"""The agentic loop: ask the model, run the tools it calls, feed back the results, until it answers.

`Agent.run()` only yields events (see `events.py`); it never prints and never touches a widget.
The conversation it keeps is always one a provider accepts: every tool call the model made has
exactly one result, also when a run is interrupted half-way.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterable
from contextlib import aclosing
from typing import Any

from ...config import DEFAULT_MAX_ROUNDS, DEFAULT_TOOL_TIMEOUT
from ...errors import AgentError, ConfigError, ModelConnectionError, ModelError, StreamError
from ...events import (
    AgentEvent,
    ApprovalNeeded,
    Done,
    Failed,
    ModelResponse,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolFinished,
    ToolStarted,
    UsageReported,
)
from ...messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
    parse_arguments,
)
from ...models.base import Model
from ...text import first_line
from ...tools import Tool, ToolOutput, ToolSet, workspace_tools
from ...tools.context_block import with_request_block
from ...tools.toolset import ToolSource
from ...workspace.workspace import Workspace
from ..approvals.policy import ApprovalPolicy, answer_of, call_preview, policy_refusal, rule_on
from ..context.window import ContextWindow
from ..skills.scripts import note_result
from .cut_off import without_cut_off_call
from .run_settings import UNSET, RunSettings
from .side_channel import SideChannel
from .tool_calls import kept_reply, summarize_call

STREAM_RETRIES = 1
"""How often a round whose stream broke off is asked again before the run fails."""
_SCRIPT_POLICY = ApprovalPolicy(read="allow", edit="allow", execute="allow")
"""An Agent built in a script runs every change unasked (its author owns the loop); reading a
secret still asks, and `ask()` denies what asks, so a hijacked model cannot read a key unseen."""

SYSTEM_PROMPT = """\
You are copilot_nb, a coding agent that lives inside the user's Jupyter kernel.
You work in the project directory {root} through the tools you are given: read files before you
change them, make the smallest edit that does the job, and check your work when you can.
When a tool returns an error, read it and try again differently; do not repeat the same call.
When you are done, answer briefly in Markdown: what you found or changed, and anything left to do.
"""

INTERRUPTED = "cancelled: the user interrupted the run before this tool call finished"
BUSY = (
    "The agent is already working on another request in this conversation "
    "(a cell or the chat panel); wait for it, or stop it, then ask again."
)


class Agent:
    """A conversation with a model that can use tools on a workspace.

    `async for event in agent.run(prompt)` streams one turn; `await agent.ask(prompt)` returns
    just the final answer. Consecutive runs continue the same conversation; `reset()` starts anew.
    """

    def __init__(
        self,
        *,
        model: Model,
        workspace: Workspace | str | os.PathLike[str] | None = None,
        tools: ToolSource | None = None,
        extra_tools: Iterable[Tool] = (),
        system_prompt: str | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        approvals: ApprovalPolicy | None = None,
        context: ContextWindow | None = None,
        tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
        history: Iterable[Message] = (),
    ) -> None:
        if tool_timeout is not None and not tool_timeout > 0:
            raise ConfigError(
                f"tool_timeout must be more than 0 seconds, or None for no limit; not {tool_timeout!r}"
            )
        self.model = model
        self.approvals = approvals if approvals is not None else _SCRIPT_POLICY
        if not isinstance(workspace, Workspace):
            workspace = Workspace(workspace if workspace is not None else os.getcwd())
        self.workspace = workspace
        self.tools: ToolSource = tools if tools is not None else workspace_tools(workspace)
        if extra_tools:
            self.tools = ToolSet([*self.tools, *extra_tools])
        self.system_prompt = system_prompt or SYSTEM_PROMPT.format(root=workspace.root)
        self.max_rounds = max_rounds
        self.tool_timeout = tool_timeout
        """Seconds one tool call may run before it is stopped (None: no limit); a tool with its
        own limit (run_code's timeout) may run that long plus a grace."""
        self.context = context if context is not None else ContextWindow()
        """Measures each request against the model's window and compacts the conversation."""
        self.messages: list[Message] = [SystemMessage(content=self.system_prompt), *history]
        """The conversation: our system prompt, then `history` (a resumed one), then each run's."""
        self.running = False
        """True while a turn is under way."""
        self._blocks: dict[int, tuple[Message, str]] = {}
        """Each turn's context block, by the id of the request it went with (`request_messages`)."""
        self._side = SideChannel()
        self.current_call_id = ""
        """The id of the tool call running now (a subagent marks its events with it)."""
        self._active: RunSettings | None = None

    @property
    def active(self) -> RunSettings:
        """The settings of the run under way, else of the last run, else the agent's own (every
        field set): what a tool running under this agent follows (a subagent takes its model
        and approvals)."""
        return self._active if self._active is not None else self._own()

    def _own(self) -> RunSettings:
        """The bottom layer of every run's settings: what the agent was built with."""
        return RunSettings(
            model=self.model,
            tools=self.tools,
            approvals=self.approvals,
            max_rounds=self.max_rounds,
            tool_timeout=self.tool_timeout,
            system_prompt=self.system_prompt,
            context_block=None,
            on_message=None,
            tool_updates=None,
            request_options={},
            turn_label=None,
        )

    def emit(self, event: AgentEvent) -> None:
        """Send an event out of this agent's run while a tool runs (a subagent's own events)."""
        self._side.emit(event)

    def request_messages(self) -> list[Message]:
        """The conversation as the next request sends it: each turn's context block before that
        turn's request, as first sent, so a provider's cached prompt still matches from the
        start (a copy; the history keeps each request as it was asked)."""
        blocks = self._blocks
        return [
            with_request_block([m], blocks[id(m)][1])[0] if blocks.get(id(m), (0,))[0] is m else m
            for m in self.messages
        ]

    def _set_history_prompt(self, text: str) -> None:
        if self.messages and isinstance(self.messages[0], SystemMessage):
            self.messages[0] = SystemMessage(content=text)

    def reset(self) -> None:
        """Forget the conversation; keep the model, tools, workspace and context settings."""
        self.messages = [SystemMessage(content=self.system_prompt)]
        self.context = self.context.fresh()

    async def ask(self, prompt: str, **options: Any) -> str:
        """Run one turn and return the final answer; raise AgentError if it fails.

        Nobody is there to answer an approval request, so calls that would ask are denied.
        """
        async with aclosing(self.run(prompt, **options)) as events:
            async for event in events:
                if isinstance(event, ApprovalNeeded):
                    event.deny("no one was asked: Agent.ask() runs without a user to approve")
                elif isinstance(event, Done):
                    return event.text
                if isinstance(event, Failed):
                    raise AgentError(event.error)
        raise AgentError("the run ended without an answer")

    async def run(
        self,
        prompt: str | UserMessage,
        *,
        max_rounds: int | None = None,
        approvals: ApprovalPolicy | None = None,
        settings: RunSettings | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Stream one turn: text as it arrives, each tool call and its outcome, then Done or Failed.

        `settings` hold for this run only (the agent's own fill what they leave out), and so do
        `max_rounds` and `approvals` (a `--yes` cell), which win over the same in `settings`.
        One turn at a time: a second run while one is under way (the chat panel and a cell on
        the same conversation) ends at once with a `Failed` that says so. A `UserMessage` prompt
        brings its images (a proxy client's request).
        """
        if self.running:
            yield Failed(error=BUSY)
            return
        self.running = True
        given = RunSettings(
            max_rounds=UNSET if max_rounds is None else max_rounds,
            approvals=UNSET if approvals is None else approvals,
        )
        self._active = self._own().resolve(settings, given)
        try:
            async with aclosing(self._turn(prompt)) as events:
                async for event in events:
                    yield event
        finally:
            self.running = False

    async def _turn(self, prompt: str | UserMessage) -> AsyncGenerator[AgentEvent, None]:
        run = self.active
        asked = prompt if isinstance(prompt, UserMessage) else UserMessage(content=prompt)
        self.workspace.begin_turn(run.turn_label or asked.content)
        self._set_history_prompt(run.system_prompt)  # the run's instructions, current
        self._close_open_tool_calls()
        block = await run.context_block() if run.context_block is not None else ""
        self._keep(asked)
        held = {id(m): self._blocks[id(m)] for m in self.messages if id(m) in self._blocks}
        self._blocks = {**held, id(asked): (asked, block)}  # those of requests still held
        rounds = run.max_rounds
        for _ in range(rounds):
            reply: list[AssistantMessage] = []
            try:
                async for event in self._ask_model(reply):
                    yield event
            except ModelError as exc:
                yield Failed(error=str(exc))
                return
            except (RecursionError, MemoryError) as exc:  # a reply too deep or too big to decode
                yield Failed(
                    error=f"{run.model.name}: its reply could not be read "
                    f"({type(exc).__name__}); ask again, or start a new conversation."
                )
                return
            if not reply:
                yield Failed(error=f"{run.model.name}: the reply ended without a final message")
                return
            answer, cut = without_cut_off_call(reply[0])  # never run nor resend half a call
            kept = kept_reply(answer)
            self._keep(kept)
            if reply[0].usage is not None:
                self.context.observe(reply[0].usage)
                yield UsageReported(usage=reply[0].usage)
            else:  # the request was billed all the same: counted from our estimate, marked
                yield UsageReported(usage=self.context.estimated_usage(reply[0]), estimated=True)
            if cut is not None:
                yield Notice(text=cut.notice)
            elif not answer.tool_calls:
                yield Done(text=answer.text)
                return
            try:
                for call, sent in zip(kept.tool_calls, answer.tool_calls, strict=True):
                    async for tool_event in self._run_tool(call, sent.arguments):
                        yield tool_event
            finally:
                self._close_open_tool_calls()
            if cut is not None:
                self._keep(UserMessage(content=cut.to_model))
        yield Failed(
            error=(
                f"The agent stopped after {rounds} rounds of tool calls without a final answer. "
                "Run the cell again to let it continue, or raise --max-rounds."
            )
        )

    async def _ask_model(self, reply: list[AssistantMessage]) -> AsyncGenerator[AgentEvent, None]:
        """One model request, streamed; the complete reply is appended to `reply`.

        A stream that breaks mid-reply, or reports a passing failure (Anthropic's
        `overloaded_error`), is asked again once: no tool of this round has run yet, so repeating
        the request is safe. What the user saw of a reply that never completed
        stays in the conversation, marked as interrupted.
        """
        run = self.active
        if run.tool_updates is not None:
            changes = await run.tool_updates()
            if changes.tools is not None:  # offered from this request on
                self._active = run = run.resolve(RunSettings(tools=changes.tools))
            for update in changes.updates:
                yield update
        tools = run.tools.list_tools()
        self.messages = await self.context.fit(self.messages, run.model, tools)
        if self.context.last_compaction is not None:
            yield Notice(text=self.context.last_compaction.describe())
            for used in self.context.last_compaction.used:  # its summary request, billed
                yield used
        for attempt in range(1 + STREAM_RETRIES):
            partial: list[str] = []
            try:
                async for event in run.model.stream(
                    self.request_messages(), tools=tools, **run.request_options
                ):
                    if isinstance(event, TextDelta):
                        partial.append(event.text)
                        yield event
                    elif isinstance(event, (ReasoningDelta, Notice)):
                        yield event
                    elif isinstance(event, ModelResponse):
                        reply.append(event.message)
                    elif not isinstance(event, ToolCallDelta):
                        raise TypeError(f"unexpected model event {event!r}")
                return
            except (ModelConnectionError, StreamError) as exc:
                if attempt == STREAM_RETRIES or not exc.retryable:
                    self._keep_partial_text(partial)
                    raise
                yield Notice(text=f"{exc} — asking again", retry=True)
            except BaseException:
                self._keep_partial_text(partial)  # interrupted or failed mid-stream
                raise

    async def _run_tool(self, call: ToolCall, arguments: Any) -> AsyncGenerator[AgentEvent, None]:
        """Run one call with the `arguments` the model sent (`call` is the call as kept)."""
        summary = summarize_call(call)
        yield ToolStarted(
            call_id=call.id, name=call.name, arguments=call.arguments, summary=summary
        )
        run = self.active
        tool = run.tools.get(call.name)
        if isinstance(arguments, str):  # not parsed yet, or refused (not JSON, too deep, too big)
            arguments = parse_arguments(arguments)
        ruling = await rule_on(run.approvals, call.name, tool, arguments)
        category, decision = ruling.category, ruling.decision
        trust = tool.trust if tool is not None else None
        refusal = ""
        if decision == "deny":
            refusal = policy_refusal(call.name, category)
        elif decision == "ask":
            request = ApprovalNeeded(
                call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                summary=summary,
                category=category,
                decision=asyncio.get_running_loop().create_future(),
                note=ruling.note or (trust.note if trust is not None else ""),
                preview=ruling.preview or await call_preview(tool, arguments),
            )
            yield request
            refusal = await answer_of(request, trust)
        if refusal:
            output = ToolOutput(
                content=refusal + ". Do not retry it; ask the user or try another way.",
                is_error=True,
                summary=f"denied ({ruling.why})" if ruling.why else "denied",
            )
        else:
            self.current_call_id = call.id
            done: list[ToolOutput] = []
            work = run.tools.call_tool(call.name, arguments, timeout=run.tool_timeout)
            async for side_event in self._side.run(work, done):
                yield side_event
            output = done[0]
            note_result(arguments, output.content)
        self._keep(
            ToolResult(
                tool_call_id=call.id,
                name=call.name,
                content=output.content,
                is_error=output.is_error,
                images=output.images,
            )
        )
        for change in output.changes:
            yield change
        yield ToolFinished(
            call_id=call.id,
            name=call.name,
            ok=not output.is_error,
            summary=output.summary or first_line(output.content),
            content=output.content,
            outputs=output.outputs,
        )

    def _keep(self, message: Message) -> None:
        self.messages.append(message)
        if (hook := self.active.on_message) is not None:
            hook(message)

    def _keep_partial_text(self, partial: list[str]) -> None:
        if partial:
            text = "".join(partial)
            self._keep(AssistantMessage(text=f"{text}\n\n[interrupted]"))

    def _close_open_tool_calls(self) -> None:
        """Give every tool call of the last reply a result, so the provider accepts the history."""
        for position in range(len(self.messages) - 1, -1, -1):
            message = self.messages[position]
            if isinstance(message, AssistantMessage):
                break
        else:
            return
        answered = {
            m.tool_call_id for m in self.messages[position + 1 :] if isinstance(m, ToolResult)
        }
        for call in message.tool_calls:
            if call.id not in answered:
                self._keep(
                    ToolResult(
                        tool_call_id=call.id, name=call.name, content=INTERRUPTED, is_error=True
                    )
                )
