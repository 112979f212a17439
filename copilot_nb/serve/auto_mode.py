"""`tool_execution: "auto"`: the proxy runs the agent loop itself and answers with its result.

The client's conversation becomes an agent's (its system message, else ours; the history; the
last user message as the request); the tools are the server's own when `use_notebook_tools` is
set (none otherwise), under the server's approval policy: a call that asks shows its buttons in
the notebook that started the server, or is denied when nobody can be asked. A streaming client
gets the text as it comes and each tool call as it starts and ends, in a `copilot_nb` field of
an otherwise empty chunk (clients that do not know it skip it). A client that goes away stops
the run, leaving the agent's conversation valid (it is thrown away with the request anyway).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from ..agent.loop.rounds import Agent
from ..agent.loop.run_settings import RunSettings
from ..agent.stages import SERVED
from ..agent.turn import Turn, TurnEvent, run_stages
from ..events import (
    ApprovalNeeded,
    Done,
    Failed,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    UsageReported,
)
from ..messages import AssistantMessage, SystemMessage, Usage, UserMessage
from ..models.base import Model
from ..tools.registry import ToolSet
from .backend import Backend
from .http.replies import error_response, event_stream, json_response
from .openai.chat_request import ApiError, ChatRequest
from .openai.chat_response import ChunkEncoder, completion_body, sse
from .relayed import Relay

DEFAULT_ROUNDS = 10


def agent_for(backend: Backend, chat: ChatRequest, model: Model) -> tuple[Agent, UserMessage]:
    """An agent holding the client's conversation, and the request it should answer (with its
    images)."""
    if chat.tools:
        raise ApiError(
            'tool_execution "auto" runs the server\'s own tools (use_notebook_tools); send your '
            'own tools with tool_execution "client" and run their calls yourself',
            param="tools",
            code="client_tools_with_auto",
        )
    messages = list(chat.messages)
    asked = messages[-1]
    if not isinstance(asked, UserMessage):
        raise ApiError(
            'with tool_execution "auto" the last message must be the user\'s request',
            param=f"messages[{len(messages) - 1}]",
            code="last_message_not_user",
        )
    system = next((m.content for m in messages if isinstance(m, SystemMessage)), None)
    agent = Agent(
        model=model,
        workspace=backend.workspace(),
        tools=backend.tools() if chat.use_notebook_tools else ToolSet(),
        system_prompt=system,
        max_rounds=chat.max_tool_rounds or DEFAULT_ROUNDS,
        approvals=backend.approvals(),
        tool_timeout=backend.tool_timeout,
        history=[m for m in messages[:-1] if not isinstance(m, SystemMessage)],
    )
    return agent, asked


async def auto_response(
    backend: Backend, chat: ChatRequest, model: Model, encoder: ChunkEncoder, relay: Relay
) -> Any:
    try:
        agent, prompt = agent_for(backend, chat, model)
    except ApiError as exc:
        return error_response(exc)
    if chat.stream:
        return event_stream(_stream(backend, agent, prompt, chat, encoder, relay))
    text, usage, calls, failure = "", Usage(), [], ""
    async with aclosing(served(backend, agent, prompt, chat)) as events:
        async for event in events:
            if isinstance(event, UsageReported) and not event.estimated:
                usage = _add(usage, event.usage)  # what servers said, never our estimate
            elif isinstance(event, ToolFinished):
                calls.append(_report(event))
            elif isinstance(event, Done):
                text = event.text
            elif isinstance(event, Failed):
                failure = event.error
    if failure:
        return error_response(ApiError(relay.text(failure), status=502, type="upstream_error"))
    message = AssistantMessage(text=text, finish_reason="stop", usage=usage)
    body = completion_body(
        message, model=chat.model, completion_id=encoder.completion_id, created=encoder.created
    )
    body["copilot_nb"] = {"tool_calls": calls}
    return json_response(body)


def settings_of(chat: ChatRequest) -> RunSettings:
    """The client's request fields (temperature, tool_choice, ...) for every model call."""
    return RunSettings(request_options=dict(chat.options))


def served(
    backend: Backend, agent: Agent, prompt: UserMessage, chat: ChatRequest
) -> AsyncGenerator[TurnEvent, None]:
    """The run as a turn of the stages a session's turn asks through (`SERVED`): a call that
    asks shows its buttons in the notebook that started the server, or is denied; whatever is
    left unanswered when the run ends (the client went away) is denied."""
    approver = backend.approver if backend.approver is not None else Refusing(backend.unapproved)
    turn = Turn(
        prompt=prompt,
        model=agent.model,
        approver=approver,
        asker=approver,
        agent=agent,
        settings=settings_of(chat),
    )
    return run_stages(turn, SERVED)


@dataclass(frozen=True)
class Refusing:
    """The approver where nobody can be asked: each request denied at once, saying why."""

    reason: str

    def answer(self, request: ApprovalNeeded) -> None:
        request.deny(self.reason)


async def _stream(
    backend: Backend,
    agent: Agent,
    prompt: UserMessage,
    chat: ChatRequest,
    encoder: ChunkEncoder,
    relay: Relay,
) -> AsyncIterator[bytes]:
    yield encoder.start()
    usage = Usage()
    async with aclosing(served(backend, agent, prompt, chat)) as events:
        async for event in events:
            if isinstance(event, (TextDelta, ReasoningDelta)):
                yield encoder.event(event)
            elif isinstance(event, ToolStarted):
                yield _progress(encoder, _started(event))
            elif isinstance(event, ToolFinished):
                yield _progress(encoder, {"tool": _report(event)})
            elif isinstance(event, UsageReported) and not event.estimated:
                usage = _add(usage, event.usage)
            elif isinstance(event, Done):
                done = AssistantMessage(text="", finish_reason="stop", usage=usage)
                yield encoder.event(ModelResponse(message=done))
            elif isinstance(event, Failed):
                failure = ApiError(relay.text(event.error), status=502, type="upstream_error")
                yield encoder.error(failure)
    yield encoder.done()


def _started(event: ToolStarted) -> dict[str, Any]:
    return {
        "tool": {
            "id": event.call_id,
            "name": event.name,
            "status": "started",
            "summary": event.summary,
        }
    }


def _report(event: ToolFinished) -> dict[str, Any]:
    return {
        "id": event.call_id,
        "name": event.name,
        "status": "ok" if event.ok else "error",
        "summary": event.summary,
    }


def _progress(encoder: ChunkEncoder, payload: dict[str, Any]) -> bytes:
    """An empty chunk carrying a tool call's progress: SDKs that do not know the field skip it."""
    return sse(
        {
            "id": encoder.completion_id,
            "object": "chat.completion.chunk",
            "created": encoder.created,
            "model": encoder.model,
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": None}],
            "copilot_nb": payload,
        }
    )


def _add(total: Usage, more: Usage) -> Usage:
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
    )
