"""`ScriptedModel`: an offline model that replays a script, in-process.

It keeps the requests it received, and fails loudly when called beyond its script, so a test
proves both what the agent sent and that the conversation went exactly as planned.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterable

from ..errors import ScriptError
from ..events import ModelEvent, ModelResponse, ReasoningDelta, TextDelta, ToolCallDelta
from ..messages import AssistantMessage
from ..models.base import ChatModel, ModelRequest
from ..models.openai.chat_request import chat_request
from ..text import counted, shorten
from .script import Reply, ScriptedFailure, ScriptedRequest, Step, pieces


class Script:
    """The steps still to play, and what was asked of them; safe to use from several threads."""

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        responder: Callable[[ScriptedRequest], Reply] | None = None,
    ) -> None:
        self._steps = list(steps)
        self._responder = responder
        self._lock = threading.Lock()
        self.requests: list[ScriptedRequest] = []
        self.errors: list[str] = []

    def next_turn(self, request: ScriptedRequest) -> Reply:
        """The reply for this request; raises ScriptError (and remembers it) past the script's end."""
        with self._lock:
            self.requests.append(request)
            position = len(self.requests)
            if self._steps:
                step = self._steps.pop(0)
            elif self._responder is not None:
                step = self._responder
            else:
                last = request.messages[-1] if request.messages else {}
                error = (
                    f"unscripted request #{position}: the script has no reply left "
                    f"(last message: {shorten(str(last), 200)})"
                )
                self.errors.append(error)
                raise ScriptError(error)
        return step(request) if callable(step) else step

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def assert_complete(self) -> None:
        """Fail if a step was not played or a request went beyond the script."""
        if self.errors:
            raise AssertionError("; ".join(self.errors))
        if self._steps:
            steps = counted(len(self._steps), "scripted step")
            raise AssertionError(f"{steps} never requested")


class ScriptedModel(ChatModel):
    """A Model that replays scripted turns without any network; see `ScriptedServer` for HTTP."""

    def __init__(self, steps: Iterable[Step] = (), *, name: str = "scripted") -> None:
        self.name = name
        self.script = Script(steps)

    @property
    def requests(self) -> list[ScriptedRequest]:
        return self.script.requests

    def assert_complete(self) -> None:
        self.script.assert_complete()

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body = chat_request(self.name, request)
        turn = self.script.next_turn(ScriptedRequest(body=body))
        if isinstance(turn, ScriptedFailure):
            raise ScriptError(
                f"ScriptedModel cannot play an HTTP failure ({turn.status}); use ScriptedServer"
            )
        if turn.break_after is not None:
            raise ScriptError("ScriptedModel cannot drop a connection; use ScriptedServer")
        for piece in pieces(turn.reasoning, turn.chunk_size):
            await _pause(turn.delay)
            yield ReasoningDelta(text=piece)
        for piece in pieces(turn.text, turn.chunk_size):
            await _pause(turn.delay)
            yield TextDelta(text=piece)
        for index, call in enumerate(turn.tool_calls):
            yield ToolCallDelta(
                index=index, id=call.id, name=call.name, arguments=call.raw_arguments
            )
        yield ModelResponse(
            message=AssistantMessage(
                text=turn.text,
                reasoning=turn.reasoning,
                tool_calls=turn.tool_calls,
                finish_reason=turn.resolved_finish_reason,
                usage=turn.resolved_usage,
            )
        )


async def _pause(delay: float) -> None:
    # Always yield to the loop, so a long scripted stream can be cancelled like a real one.
    await asyncio.sleep(delay)
