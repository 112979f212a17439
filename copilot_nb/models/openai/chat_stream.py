"""A pure accumulator for Chat Completions streams: SSE bytes or parsed chunks in, events out.

Every OpenAI-compatible server streams the same chunk shape with its own quirks; they are all
handled here, with no I/O, so they can be tested against the recorded conformance corpus
(tests/data/conformance). Tool-call rules, where servers disagree with openai-python:

1. A tool-call delta with an `id` that differs from the stored id of the call it would continue
   starts a new call, even at an `index` already in use (Copilot-served Claude, Ollama).
2. A delta without `index` and without a new `id` continues the most recent call (Mistral, Gemini).
3. An `id` or `function.name` equal to the stored one, or empty, is not appended again (Fireworks,
   Qwen via Alibaba, GLM); a different name piece is appended, as openai-python does.

Reasoning text comes from `reasoning_content` (DeepSeek, xAI, vLLM), `reasoning` (OpenRouter, Groq)
or `cot_summary` (GitHub Copilot); the first one present in a delta wins, because some servers send
the same text under two of these names. Usage is the last non-null top-level `usage`.
The legacy `function_call` delta is kept apart (see `function_call`), not mixed into `tool_calls`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ...errors import StreamError
from ...events import ModelEvent, ReasoningDelta, ToolCallDelta
from ...messages import AssistantMessage, ToolCall, Usage
from ...text import server_text, shorten
from ..json_stream import JSONStreamDecoder
from ..sse import ServerSentEvent

_loads = json.loads


class _Call:
    """One tool call being accumulated."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []


class _Choice:
    """The accumulated state of one choice (`n>1` streams carry several)."""

    __slots__ = (
        "by_index",
        "calls",
        "finish_reason",
        "function_arguments",
        "function_name",
        "last_call",
        "reasoning",
        "refusal",
        "text",
    )

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.calls: list[_Call] = []
        self.by_index: dict[Any, int] = {}
        self.last_call: int | None = None
        self.finish_reason: str | None = None
        self.function_name: str | None = None
        self.function_arguments: list[str] | None = None


class ChatCompletionsDecoder(JSONStreamDecoder):
    """Accumulates one Chat Completions stream and yields the deltas of choice 0 as they arrive.

    `done` turns True at the `[DONE]` sentinel, after which input is ignored. An error in the
    stream raises `StreamError` and keeps the provider's error object in `error`; deltas decoded
    from the same piece before it are returned first and the error is raised by the next `feed()`
    or `close()`. After that, `close()` and `choices()` return what arrived before the error.
    `ToolCallDelta.index` is the call's position in the reply's `tool_calls`, which differs from
    the provider's `index` when a server reuses one.
    """

    EXPECTED = "a Chat Completions chunk (is the base URL an OpenAI-compatible endpoint?)"

    def __init__(self) -> None:
        super().__init__()
        self._choices: dict[int, _Choice] = {}
        self._usage: Mapping[str, Any] | None = None

    def close(self) -> AssistantMessage:
        """Finish the stream (see `flush`) and return choice 0's complete message.

        Raises a stream error not raised yet; called again, it returns the reply before the error.
        """
        self.flush()
        self._raise_pending()
        return self._message(self._choices.get(0))

    def choices(self) -> dict[int, AssistantMessage]:
        """Every choice's message so far, by choice index (`n>1`); usage is the whole request's."""
        return {index: self._message(state) for index, state in sorted(self._choices.items())}

    @property
    def function_call(self) -> ToolCall | None:
        """Choice 0's legacy `function_call` (only sent when a request uses `functions=`)."""
        state = self._choices.get(0)
        if state is None or state.function_arguments is None:
            return None
        return ToolCall.from_raw(
            id="", name=state.function_name or "", raw_arguments="".join(state.function_arguments)
        )

    @staticmethod
    def SHAPE(msgspec: Any) -> Any:
        """A bare text delta: one choice, index 0 (or none), a delta of `content` alone, no
        finish_reason, usage or error (null or absent); other fields of the chunk or the choice
        (id, model, logprobs, content filters, ...) are what the dict path ignores too."""

        struct = msgspec.defstruct
        delta = struct("Delta", [("content", str)], forbid_unknown_fields=True)
        choice = struct(
            "Choice", [("delta", delta), ("index", Literal[0], 0), ("finish_reason", None, None)]
        )
        return struct(
            "Chunk",
            [("choices", tuple[choice]), ("usage", None, None), ("error", None, None)],  # type: ignore[valid-type]
        )

    def _on_shape(self, chunk: Any, events: list[ModelEvent]) -> bool:
        """`_on_object` for a chunk of `SHAPE`."""
        state = self._choices.get(0)
        if state is None:
            state = self._choices[0] = _Choice()
        content = chunk.choices[0].delta.content
        if content:
            state.text.append(content)
            self._run.add(events, content)
        return True

    def feed_chunk(self, chunk: Mapping[str, Any]) -> list[ModelEvent]:
        """Accumulate one parsed chunk; returns the events for choice 0."""
        events: list[ModelEvent] = []
        self._on_object(chunk, events)
        return events

    def _on_object(self, chunk: Mapping[str, Any], events: list[ModelEvent]) -> None:
        """Accumulate one parsed chunk, appending the events for choice 0 to `events`."""
        error = chunk.get("error")
        if error:
            self._fail(_provider_error(error))
        usage = chunk.get("usage")
        if usage is not None:
            self._usage = usage
        for choice in chunk.get("choices") or ():
            index = choice.get("index") or 0
            state = self._choices.get(index)
            if state is None:
                state = self._choices[index] = _Choice()
            delta = choice.get("delta")
            if delta:
                content = delta.get("content")
                if content:
                    if not isinstance(content, str):
                        content = _text_parts(content)
                    state.text.append(content)
                    if index == 0 and content:
                        self._run.add(events, content)
                if content is None or len(delta) > 1:  # not the hot path: a bare text delta
                    _delta_extras(state, delta, events if index == 0 else None)
            finish_reason = choice.get("finish_reason")
            if finish_reason:  # some servers send "" on every chunk, as openai-python ignores
                state.finish_reason = finish_reason

    def _events(self, sse_events: Iterable[ServerSentEvent], out: list[ModelEvent]) -> None:
        """Turn decoded SSE events into model events, stopping at `[DONE]` or an error."""
        for sse in sse_events:
            data = sse.data
            if sse.event == "error":
                self._fail(_event_error(data))
            if data.startswith("[DONE]"):
                self.done = True
                return
            if not data:
                continue
            self._on_object(self._json_object(data), out)

    def _message(self, state: _Choice | None) -> AssistantMessage:
        """Build a complete message from one choice's accumulated state."""
        raw = self._usage
        usage = None
        if isinstance(raw, Mapping):
            usage = Usage(
                input_tokens=raw.get("prompt_tokens") or 0,
                output_tokens=raw.get("completion_tokens") or 0,
                raw=dict(raw),
            )
        if state is None:
            return AssistantMessage(usage=usage)
        return AssistantMessage(
            text="".join(state.text),
            tool_calls=tuple(
                ToolCall.from_raw(
                    id=call.id or "", name=call.name or "", raw_arguments="".join(call.arguments)
                )
                for call in state.calls
            ),
            reasoning="".join(state.reasoning),
            refusal="".join(state.refusal),
            finish_reason=state.finish_reason,
            usage=usage,
        )


def _delta_extras(
    state: _Choice, delta: Mapping[str, Any], events: list[ModelEvent] | None
) -> None:
    """Accumulate everything in a delta but its text; `events` is None for choices other than 0."""
    reasoning = delta.get("reasoning_content") or delta.get("reasoning") or delta.get("cot_summary")
    if reasoning and isinstance(reasoning, str):
        state.reasoning.append(reasoning)
        if events is not None:
            events.append(ReasoningDelta(text=reasoning))
    refusal = delta.get("refusal")
    if refusal:
        state.refusal.append(refusal)
    tool_calls = delta.get("tool_calls")
    if tool_calls:
        _tool_calls(state, tool_calls, events if events is not None else [])
    function_call = delta.get("function_call")
    if function_call:
        _function_call(state, function_call)


def _tool_calls(state: _Choice, entries: Iterable[Any], events: list[ModelEvent]) -> None:
    """Accumulate `delta.tool_calls` entries by the module's three rules."""
    calls = state.calls
    for entry in entries:
        index = entry.get("index")
        call_id = entry.get("id") or None
        function = entry.get("function") or {}
        name = function.get("name") or None
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):  # a few servers send the arguments as an object
            arguments = json.dumps(arguments)
        position = state.last_call if index is None else state.by_index.get(index)
        if position is not None and call_id:
            stored = calls[position].id
            if stored and stored != call_id:
                position = None
        if position is None:
            position = len(calls)
            calls.append(_Call())
            if index is not None:
                state.by_index[index] = position
        state.last_call = position
        call = calls[position]
        new_id = new_name = None
        if call_id and call.id != call_id:
            call.id = new_id = call_id
        if name and call.name != name:
            call.name = name if call.name is None else call.name + name
            new_name = name
        if arguments:
            call.arguments.append(arguments)
        if new_id or new_name or arguments:
            events.append(
                ToolCallDelta(index=position, id=new_id, name=new_name, arguments=arguments)
            )


def _function_call(state: _Choice, function_call: Mapping[str, Any]) -> None:
    """Accumulate a legacy `delta.function_call` (name once, arguments in pieces)."""
    name = function_call.get("name") or None
    if name and state.function_name != name:
        state.function_name = name if state.function_name is None else state.function_name + name
    if state.function_arguments is None:
        state.function_arguments = []
    arguments = function_call.get("arguments")
    if arguments:
        state.function_arguments.append(arguments)


def _text_parts(content: Any) -> str:
    """Text of a content given as a list of parts ({"type": "text", "text": ...})."""
    if not isinstance(content, list):
        return str(content)
    return "".join(
        part.get("text") or ""
        for part in content
        if isinstance(part, Mapping) and part.get("type") == "text"
    )


def _provider_error(error: Any) -> StreamError:
    """A StreamError carrying the provider's own message and error object."""
    message = error.get("message") if isinstance(error, Mapping) else error
    if not message:
        message = f"the model stream reported an error: {shorten(json.dumps(error), 300)}"
    return StreamError(server_text(message), body=error)


def _event_error(data: str) -> StreamError:
    """The StreamError for an `event: error` SSE event, whatever its data holds."""
    try:
        payload = _loads(data)
    except (ValueError, RecursionError):
        return StreamError(
            server_text(data) or "the model stream sent an error event with no details", body=data
        )
    if isinstance(payload, Mapping) and payload.get("error"):
        return _provider_error(payload["error"])
    return _provider_error(payload)
