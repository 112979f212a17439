"""Fill-in-the-middle: what every completion wire shares, and the pure decoders of its streams.

A completion while the user types is not a chat turn: the model gets the text before the cursor
(`prefix`) and after it (`suffix`) and answers with the middle. Each provider spells that on its
own wire (`openai/fim_completions.py`, `openai/ollama_generate.py`, `openai/llama_infill.py`,
`copilot/fim_completions.py`); a model that has no such wire is asked through its chat API with a
completion prompt (`ChatFill`). Every wire is a `FillModel`: `fill(request)` streams
`TextDelta`s and ends with a `ModelResponse`, like `Model.stream()`, through an endpoint as the
chat models do (retries, policy, redaction); a recording cassette keeps its requests as lookups
when the one that runs it says so (`agent/ghost_text/model_choice.py`).

The decoders here are pure (bytes in, events out): the OpenAI-style text-completion chunk
(`choices[0].text`, ended by `data: [DONE]`), which `/v1/completions` servers, DeepSeek's FIM
beta and Copilot's ghost-text endpoint send; and llama.cpp's `/infill` events (`content`,
`stop: true` on the last one, no `[DONE]`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import StreamError
from ..events import ModelEvent, TextDelta
from ..messages import AssistantMessage, Usage
from ..text import server_text
from .json_stream import JSONStreamDecoder
from .sse import ServerSentEvent

if TYPE_CHECKING:
    from .endpoint import Endpoint


@dataclass(frozen=True, kw_only=True)
class FillRequest:
    """One completion at the cursor: the text around it, and what bounds the answer.

    `context` is what the model should know but is not in the cell (the cells above, the
    kernel's variables), as `(name, text)` pieces; a wire that takes extra context (llama.cpp's
    `input_extra`) gets them apart, the others get them as comment lines before the prefix.
    """

    prefix: str
    suffix: str = ""
    language: str = "python"
    context: tuple[tuple[str, str], ...] = ()
    max_tokens: int = 128
    stop: tuple[str, ...] = ()
    temperature: float = 0.0

    def prompt(self) -> str:
        """The prefix with the context before it, for wires with one prompt string."""
        if not self.context:
            return self.prefix
        head = "".join(f"{text.rstrip()}\n\n" for _name, text in self.context if text.strip())
        return head + self.prefix


@runtime_checkable
class FillModel(Protocol):
    """A model that completes at the cursor; `fill()` streams like `Model.stream()`."""

    name: str

    @property
    def provider(self) -> str:
        """The provider it speaks for, as model strings name it."""
        ...

    @property
    def endpoint(self) -> Endpoint | None:
        """Where its requests go (None: through a chat model's, which a fill never records)."""
        ...

    def fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]: ...

    async def aclose(self) -> None: ...


def usage_from(raw: Any) -> Usage | None:
    """An OpenAI-style `usage` object as ours (None when the server sent none)."""
    if not isinstance(raw, Mapping):
        return None
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        raw=dict(raw),
    )


class _FillDecoder(JSONStreamDecoder):
    """A fill wire's stream of JSON events: the text, its finish and usage gathered; `[DONE]`
    or the wire's own last event ends it, an `error` object fails it."""

    def __init__(self) -> None:
        super().__init__()
        self._text: list[str] = []
        self._finish: str | None = None
        self._usage: Usage | None = None

    def _events(self, sse_events: Iterable[ServerSentEvent], out: list[ModelEvent]) -> None:
        for sse in sse_events:
            data = sse.data
            if data.startswith("[DONE]"):
                self.done = True
                return
            if not data:
                continue
            chunk = self._json_object(data)
            if chunk.get("error"):
                self._fail(_stream_error(chunk["error"]))
            self._chunk(chunk, out)
            if self.done:
                return

    def _chunk(self, chunk: Mapping[str, Any], out: list[ModelEvent]) -> None:
        """One event of the wire: its text to `out`, and `done` set by the last one."""
        raise NotImplementedError

    def _text_delta(self, text: Any, out: list[ModelEvent]) -> None:
        if text:
            self._text.append(text)
            out.append(TextDelta(text=text))

    def close(self) -> AssistantMessage:
        self.flush()
        self._raise_pending()
        return AssistantMessage(
            text="".join(self._text), finish_reason=self._finish, usage=self._usage
        )


class TextCompletionsDecoder(_FillDecoder):
    """A streamed text completion: `data: {"choices": [{"text": ..., "index": 0,
    "finish_reason": ...}], "usage"?: ...}` events, then `data: [DONE]`; choice 0 only."""

    EXPECTED = "a text completion chunk (is the URL a /v1/completions endpoint?)"

    def _chunk(self, chunk: Mapping[str, Any], out: list[ModelEvent]) -> None:
        self._usage = usage_from(chunk.get("usage")) or self._usage
        for choice in chunk.get("choices") or ():
            if (choice.get("index") or 0) != 0:
                continue
            self._text_delta(choice.get("text"), out)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]


class InfillDecoder(_FillDecoder):
    """llama.cpp's `/infill` (and `/completion`) stream: `data: {"content": ..., "stop":
    false}` per token; the last event says `"stop": true` with `stop_type`, `timings` and the
    token counts; no `[DONE]` follows."""

    EXPECTED = "a llama.cpp completion event (is the URL a llama.cpp server?)"

    def _chunk(self, chunk: Mapping[str, Any], out: list[ModelEvent]) -> None:
        self._text_delta(chunk.get("content"), out)
        if chunk.get("stop"):
            self.done = True
            kind = chunk.get("stop_type")
            self._finish = "length" if kind == "limit" else "stop"
            self._usage = Usage(
                input_tokens=int(chunk.get("tokens_evaluated") or 0),
                output_tokens=int(chunk.get("tokens_predicted") or 0),
                raw={k: chunk[k] for k in ("tokens_evaluated", "tokens_predicted") if k in chunk},
            )


def _stream_error(error: Any) -> StreamError:
    message = error.get("message") if isinstance(error, Mapping) else error
    return StreamError(
        f"the server reported an error mid-stream: {server_text(message)}", body=error
    )
