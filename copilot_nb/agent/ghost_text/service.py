"""The kernel's completion service: a front end's `complete` request in, streamed ghost text out.

Protocol (the `copilot_nb.live` comm; the front end's side is `frontend/src/completionChannel.ts`):
`{request: 'complete', id, cell_id, language, prefix, suffix, cells_above, model?, max_chars?}`
is answered by zero or more `{reply: 'complete', id, delta}` and one `{reply: 'complete', id,
done: true, text, error?}`; `{request: 'cancel_complete', id}` stops one. Each request runs as a
task on the loop that received it (the kernel's own, or a subshell's where the front end sends
there, so a busy kernel still answers); a newer request from the same document cancels the
older one in flight. Answers are cached by their context (model, masked cell, context pieces),
so typing back to a state already completed costs nothing. Deltas are the post-processed text
as it grows, so ghost text never shows a fence that the final text takes off.

Usage is counted apart from the conversation's (`%copilot usage` shows it under completions),
and the time copilot_nb adds over the model's own is kept for `make bench`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import CopilotError, ModelHTTPError
from ...events import ModelResponse, TextDelta
from ...kernel_bridge import call_on
from ...models.base import Model
from ...models.fim import FillModel, FillRequest
from ...policy import completions_allowed
from ...text import shorten
from ...tools.kernel.completion_context import build_context
from ...tools.redaction.masking import redact_value
from .model_choice import resolve_fill
from .postprocess import postprocess

MAX_CHARS = 2000
CACHE_SIZE = 256
MAX_TOKENS = 256
Send = Callable[[dict[str, Any]], None]
Namespace = Callable[[], tuple[Mapping[str, Any], Mapping[str, Any]]]
"""The user's namespace and IPython's hidden names (`user_ns_hidden`)."""


@dataclass(frozen=True, kw_only=True)
class CompletionAsk:
    """One `complete` request, checked."""

    id: int
    cell_id: str = ""
    language: str = "python"
    prefix: str = ""
    suffix: str = ""
    cells_above: tuple[str, ...] = ()
    model: str | None = None
    max_chars: int = MAX_CHARS

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> CompletionAsk:
        """The request as sent, or ValueError saying which field is wrong."""
        ident = data.get("id")
        if not isinstance(ident, int) or isinstance(ident, bool):
            raise ValueError("a complete request needs an integer id")
        for name in ("prefix", "suffix", "cell_id", "language"):
            if not isinstance(data.get(name, ""), str):
                raise ValueError(f"{name} must be a string")
        cells = data.get("cells_above") or []
        if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
            raise ValueError("cells_above must be a list of strings")
        model = data.get("model")
        max_chars = data.get("max_chars") or MAX_CHARS
        if not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError("max_chars must be a positive integer")
        return cls(
            id=ident,
            cell_id=str(data.get("cell_id") or ""),
            language=str(data.get("language") or "python"),
            prefix=str(data.get("prefix") or ""),
            suffix=str(data.get("suffix") or ""),
            cells_above=tuple(cells),
            model=str(model) if isinstance(model, str) and model.strip() else None,
            max_chars=min(max_chars, MAX_CHARS),
        )


@dataclass
class ModelUsage:
    """One model's completions in this kernel."""

    requests: int = 0
    answered: int = 0
    cached: int = 0
    cancelled: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class CompletionUsage:
    """Completions counted apart from the conversation, per model spec."""

    by_model: dict[str, ModelUsage] = field(default_factory=dict)

    def of(self, spec: str) -> ModelUsage:
        return self.by_model.setdefault(spec, ModelUsage())

    def lines(self) -> list[str]:
        """What `%copilot usage` shows under "Completions (this kernel)"."""
        out = []
        for spec, u in sorted(self.by_model.items()):
            out.append(
                f"{spec}: {u.requests:,} requests ({u.answered:,} answered, {u.cached:,} from "
                f"the cache, {u.cancelled:,} cancelled, {u.failed:,} failed), "
                f"{u.input_tokens:,} tokens in, {u.output_tokens:,} out"
            )
        return out


@dataclass(frozen=True, kw_only=True)
class Timing:
    """One answered request: the whole time, and the model's part of it (seconds)."""

    total: float
    model: float


class CompletionService:
    """Answers `complete` and `cancel_complete` requests; one per kernel."""

    def __init__(
        self,
        *,
        namespace: Namespace,
        model_spec: Callable[[str | None], str],
        chat_model: Callable[[str], Model],
        allowed: Callable[[], bool] = completions_allowed,
    ) -> None:
        self._namespace = namespace
        self._model_spec = model_spec
        self._chat_model = chat_model
        self._allowed = allowed
        self._fills: dict[str, FillModel] = {}
        self._cache: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._cache_lock = threading.Lock()  # a subshell's loop and the kernel's may both ask
        self._running: dict[int, tuple[int, asyncio.Task[None]]] = {}
        self.usage = CompletionUsage()
        self.timings: deque[Timing] = deque(maxlen=1000)

    # --- the requests ---------------------------------------------------------------------

    def handle(self, data: Mapping[str, Any], send: Send, channel: object) -> None:
        """A request from the front end (`channel`: the document it came from), on a running
        loop: `complete` starts a task (cancelling that document's older one), `cancel_complete`
        stops one."""
        kind = data.get("request")
        key = id(channel)
        if kind == "cancel_complete":
            running = self._running.get(key)
            if running is not None and running[0] == data.get("id"):
                _cancel(running[1])
            return
        if kind != "complete":
            return
        started = time.perf_counter()
        try:
            ask = CompletionAsk.parse(data)
        except ValueError as exc:
            ident = data.get("id") if isinstance(data.get("id"), int) else -1
            send({"reply": "complete", "id": ident, "done": True, "text": "", "error": str(exc)})
            return
        older = self._running.get(key)
        if older is not None:
            _cancel(older[1])
        task = asyncio.get_running_loop().create_task(self.answer(ask, send, started=started))
        self._running[key] = (ask.id, task)
        task.add_done_callback(lambda done: self._forget(key, done))

    def _forget(self, key: int, task: asyncio.Task[None]) -> None:
        running = self._running.get(key)
        if running is not None and running[1] is task:
            del self._running[key]

    async def answer(self, ask: CompletionAsk, send: Send, *, started: float | None = None) -> None:
        """Answer one request: deltas as the text grows, then the final text or an error."""
        started = time.perf_counter() if started is None else started

        def done(text: str = "", error: str = "") -> None:
            reply: dict[str, Any] = {"reply": "complete", "id": ask.id, "done": True, "text": text}
            if error:
                reply["error"] = error
            send(reply)

        if not self._allowed():
            done(error="completions are turned off by the administrator's policy")
            return
        try:
            spec = self._model_spec(ask.model)
            fill = self._fill(spec)
        except CopilotError as exc:
            done(error=_short(exc))
            return
        usage = self.usage.of(spec)
        usage.requests += 1
        namespace, hidden = self._namespace()
        context = build_context(
            prefix=ask.prefix,
            suffix=ask.suffix,
            cells_above=ask.cells_above,
            namespace=namespace,
            hidden=hidden,
        )
        key = (spec, ask.language, context.prefix, context.suffix, context.pieces, ask.max_chars)
        with self._cache_lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        if cached is not None:
            usage.cached += 1
            done(cached)
            return
        request = FillRequest(
            prefix=context.prefix,
            suffix=context.suffix,
            language=ask.language,
            context=context.pieces,
            max_tokens=MAX_TOKENS,
            stop=("\n",) if ask.suffix.split("\n", 1)[0].strip() else (),
        )
        try:
            text, model_time = await self._stream(fill, request, ask, send, spec)
        except asyncio.CancelledError:
            usage.cancelled += 1
            raise
        except CopilotError as exc:
            usage.failed += 1
            done(error=_short(exc))
            return
        usage.answered += 1
        with self._cache_lock:
            self._cache[key] = text
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        done(text)
        self.timings.append(Timing(total=time.perf_counter() - started, model=model_time))

    async def _stream(
        self, fill: FillModel, request: FillRequest, ask: CompletionAsk, send: Send, spec: str
    ) -> tuple[str, float]:
        """The model's answer, post-processed, with deltas sent as it grows; and the model's time."""
        one_line = bool(request.stop)
        raw, sent, shown = "", "", ""
        began = time.perf_counter()
        events = fill.fill(request)
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    raw += event.text
                    shown = postprocess(raw, ask.prefix, ask.suffix, max_chars=ask.max_chars)
                    if shown.startswith(sent) and len(shown) > len(sent):
                        send({"reply": "complete", "id": ask.id, "delta": shown[len(sent) :]})
                        sent = shown
                    if one_line and "\n" in raw.lstrip("\n"):
                        break  # the line is complete: the rest would be cut anyway
                elif isinstance(event, ModelResponse) and event.message.usage is not None:
                    usage = self.usage.of(spec)
                    usage.input_tokens += event.message.usage.input_tokens
                    usage.output_tokens += event.message.usage.output_tokens
        except ModelHTTPError as exc:
            if "does not support insert" not in str(exc):
                raise
            # An Ollama model without a FIM template: its chat API completes instead.
            from ...models.chat_fill import ChatFill

            self._fills[spec] = fallback = ChatFill(self._chat_model(spec))
            return await self._stream(fallback, request, ask, send, spec)
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
        model_time = time.perf_counter() - began
        return shown, model_time  # the last delta's post-processing is the whole text's

    def _fill(self, spec: str) -> FillModel:
        fill = self._fills.get(spec)
        if fill is None:
            fill = self._fills[spec] = resolve_fill(spec, self._chat_model)
        return fill

    async def aclose(self) -> None:
        """Stop what runs and close the models' connections."""
        for _ident, task in list(self._running.values()):
            _cancel(task)
        for fill in self._fills.values():
            await fill.aclose()
        self._fills.clear()


def _cancel(task: asyncio.Task[None]) -> None:
    """Cancel a task from whichever loop or thread asks."""
    if not task.get_loop().is_closed():  # a closed loop's task is gone with it
        call_on(task.get_loop(), task.cancel)


def _short(exc: BaseException) -> str:
    """A short human message for the status bar, with anything secret-looking masked (a
    provider may echo a key back in its error)."""
    first = redact_value(str(exc).strip().split("\n", 1)[0])[0]
    return shorten(first, 200) if first else type(exc).__name__


__all__ = ["CompletionAsk", "CompletionService", "CompletionUsage", "Timing"]
