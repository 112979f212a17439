"""What every HTTP provider shares: one client per loop, retries, errors in plain words, and the
loop that moves a streamed reply from the socket through a pure decoder.

Retries: connection failures and HTTP 408, 409, 429 and 5xx are retried with exponential backoff
and jitter, honouring `retry-after-ms` / `Retry-After`; the total wait is bounded, so a provider
that keeps failing never becomes a retry storm. Only what can succeed later is retried: not a 501
or 505 (the server does not do this at all), and not a 500 whose body repeats word for word (the
server is refusing this request, e.g. llama.cpp's parse error, not failing for a moment). A 401 is an `AuthError` here: credentials that
expire are renewed by the request's `httpx.Auth` (see `copilot/auth.py`), inside the request.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any, Protocol

import httpx

from ..errors import (
    AuthError,
    BudgetExceeded,
    ContextLengthError,
    GatewayBudgetError,
    ModelConnectionError,
    ModelHTTPError,
)
from ..events import ModelEvent, ModelResponse, Notice, ReasoningDelta, TextDelta
from ..messages import AssistantMessage
from ..text import human_bytes, server_text
from .cassettes.cassette import Cassette
from .cassettes.transport import CassetteTransport
from .lookups import CUT_AT, ERROR_BODY_BYTES, read_body, with_body
from .network import http_client
from .read_pace import ReadPace, next_piece
from .speaker import who_answered

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""Generous read timeout: a long reply from a slow local model is normal, a dead connect is not."""

RETRY_STATUSES = frozenset({408, 409, 429})
FINAL_STATUSES = frozenset({501, 505})
"""5xx answers that say the server cannot do this request at all: asking again never helps."""

try:
    USER_AGENT = f"copilot_nb/{metadata.version('copilot_nb')}"
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    USER_AGENT = "copilot_nb/0"
"""How copilot_nb names itself where a server asks (GitHub, the Copilot API)."""


Guard = Callable[[str | None], None]
"""Raises unless a request to the endpoint (None: the model's own base URL) may leave."""
Tape = Callable[[], Cassette | None]
"""Where requests are recorded to or replayed from now: a cassette, or None (the network)."""


class LoopBoundClient:
    """An httpx.AsyncClient made lazily on the running loop, remade if the loop changes.

    A pooled connection belongs to the loop that opened it; a kernel, a script and a test runner
    may each drive the same model object from different loops. While its `tape` names a cassette,
    requests go through a client of their own that records or replays.

    Every request a model makes takes its client from `get()` just before it is sent (the chat
    and fill wires, a model list, Ollama's `/api/show`, Copilot's token exchange), so `get()`
    runs the `guard` first: no request of any kind leaves before the policy allows it.
    """

    def __init__(
        self,
        *,
        timeout: httpx.Timeout,
        guard: Guard,
        tape: Tape,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._timeout = timeout
        self._guard = guard
        self._tape = tape
        self._given = client
        self._client: httpx.AsyncClient | None = None
        self._taped: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self, endpoint: str | None = None) -> httpx.AsyncClient:
        """The client for one request to `endpoint` (None: the model's base URL), once the
        policy allows it (PolicyError otherwise)."""
        self._guard(endpoint)
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._client = self._taped = None
            self._loop = loop
        if self._tape() is not None:
            if self._taped is None or self._taped.is_closed:
                self._taped = httpx.AsyncClient(
                    timeout=self._timeout, transport=CassetteTransport(self._tape)
                )
            return self._taped
        if self._client is None or self._client.is_closed:
            self._client = http_client(self._timeout)  # the environment's proxy and CA bundle
        return self._client

    async def aclose(self) -> None:
        if self._loop is asyncio.get_running_loop():
            for client in (self._client, self._taped):
                if client is not None:
                    await client.aclose()
        self._client = self._taped = None


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to retry a request that failed for a reason that may pass."""

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_total_wait: float = 60.0
    """No single wait and no sum of waits goes past this: beyond it, the error is shown instead."""

    def retryable(self, status: int) -> bool:
        return status in RETRY_STATUSES or (status >= 500 and status not in FINAL_STATUSES)

    def repeats(self, answer: tuple[int, bytes], last: tuple[int, bytes] | None) -> bool:
        """A 500 with the very body of the last one: the server's answer to this request, not a
        hiccup (a 502/503/504 that repeats is still an overloaded or restarting server)."""
        return answer[0] == 500 and answer == last

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter, so many clients do not retry in lockstep."""
        ceiling = min(self.max_delay, self.initial_delay * 2**attempt)
        return ceiling * random.uniform(0.5, 1.0)

    def delay_for(self, response: httpx.Response | None, attempt: int) -> float:
        """The server's own `retry-after-ms` / `Retry-After` when it sent one, else backoff."""
        if response is not None:
            asked = server_retry_after(response.headers)
            if asked is not None:
                return asked
        return self.backoff(attempt)


def server_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait, from `retry-after-ms` or `Retry-After` (secs or date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        moment = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, moment.timestamp() - time.time()) if moment else None


PLAIN_BODY_CHARS = 500
"""Characters of an error body that is not JSON shown: often a proxy's HTML page."""


def provider_message(body: Any) -> str:
    """The human part of a provider's error body, whatever its shape (`error.message`, a
    FastAPI server's `detail`, plain text), as it may be shown (`text.server_text`)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            said = error.get("message") or error.get("detail") or error.get("type")
            return server_text(said or json.dumps(error))
        return server_text(error if isinstance(error, str) else json.dumps(body))
    return server_text(str(body).strip(), PLAIN_BODY_CHARS)


_CONTEXT_LENGTH = re.compile(
    r"context[_ ]length|context window|maximum context|too many tokens|prompt is too long"
    r"|tokens? exceed|exceeds? the (?:model'?s? )?(?:max|context)"
    r"|exceeds? the available context size",  # llama.cpp's llama-server
    re.IGNORECASE,
)
_TOOLS_UNSUPPORTED = re.compile(
    r"(does not|doesn't|do not) support (?:tools|tool|function)|tools? (?:are|is) not supported"
    r"|tool(?:s| use| calling)? (?:is )?not (?:supported|available|enabled)",
    re.IGNORECASE,
)


def http_error(
    response: httpx.Response, *, provider: str, sign_in_hint: str, where: str = ""
) -> ModelHTTPError:
    """Turn an HTTP error response into our exception, with the provider's own message and the
    name of who answered (`speaker.py`: a local server by its address, not as the provider)."""
    try:
        body: Any = response.json()
    except (ValueError, RecursionError):
        body = response.text
    detail = provider_message(body) or server_text(response.reason_phrase)
    if cut_at := response.extensions.get(CUT_AT):
        detail += f" [its answer went on past {human_bytes(cut_at)}; the rest was not read]"
    status = response.status_code
    who = who_answered(provider, response, where)
    message = f"{who} answered HTTP {status}: {detail}"
    if status in (401, 403):
        return AuthError(f"{sentence(message)} {sign_in_hint}", status=status, body=body)
    if _error_type(body) == "budget_exceeded":  # LiteLLM's, whatever status it is set to send
        return GatewayBudgetError(
            f"Budget reached: {sentence(message)} The gateway's budget for this key, user, team "
            "or session is spent, so the request was not retried. Ask whoever runs the gateway "
            "to raise it, then run the cell again: the conversation continues where it stopped.",
            status=status,
            body=body,
        )
    if status in (400, 413, 422) and _CONTEXT_LENGTH.search(detail):
        return ContextLengthError(
            f"The conversation is too long for this model's context window ({who} said: "
            f"{detail}). Start a new conversation with `%%copilot --new`, or use a model with a "
            "larger window.",
            status=status,
            body=body,
        )
    return ModelHTTPError(
        message, status=status, body=body, retry_after=server_retry_after(response.headers)
    )


def _error_type(body: Any) -> object:
    """`error.type` of a JSON error body (LiteLLM's `budget_exceeded`), if it has one."""
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("type") if isinstance(error, dict) else None


def sentence(text: str) -> str:
    """`text` ending in one full stop, whether or not the provider's message had its own."""
    text = text.rstrip()
    return text if text.endswith(("?", "!")) else text.rstrip(".") + "."


def rejects_tools(error: ModelHTTPError) -> bool:
    """A 400/404/422 that says the model cannot use tools (e.g. a small model served by Ollama)."""
    return error.status in (400, 404, 422) and bool(_TOOLS_UNSUPPORTED.search(str(error)))


class StreamDecoder(Protocol):
    """What a provider's pure decoder offers: bytes in, events out, the message at the end."""

    done: bool

    def feed(self, data: bytes) -> list[ModelEvent]: ...

    def flush(self) -> list[ModelEvent]: ...

    def close(self) -> AssistantMessage: ...


Send = Callable[[], Awaitable[httpx.Response]]
"""Sends the request with `stream=True`; called again for each retry."""


def error_text(exc: BaseException) -> str:
    """`ConnectError: [Errno 111] Connection refused`: an exception's type and words, for people."""
    return f"{type(exc).__name__}: {server_text(exc) or 'no details'}"


async def stream_reply(
    send: Send,
    decoder: StreamDecoder,
    *,
    provider: str,
    where: str,
    sign_in_hint: str,
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    reach_hint: str = "",
    pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> AsyncIterator[ModelEvent]:
    """Open the stream (retrying what may pass, with a Notice per wait), then decode it to the end.

    `reach_hint` is what to check when the server cannot be reached (see `env_settings`);
    `pause` waits while the pieces of a fast stream gather (`read_pace.py`)."""
    response: httpx.Response | None = None
    opening = open_stream(
        send,
        provider=provider,
        where=where,
        sign_in_hint=sign_in_hint,
        policy=policy,
        sleep=sleep,
        reach_hint=reach_hint,
    )
    async for step in opening:
        if isinstance(step, Notice):
            yield step
        else:
            response = step
    assert response is not None, "open_stream ends with the response or raises"
    # Decoded here rather than in a helper generator: a second generator would cost a hop per event.
    pace, chunks = ReadPace(), response.aiter_bytes()
    try:
        while (read := await next_piece(chunks)) is not None:
            chunk, waited, received = read
            for event in merged(decoder.feed(chunk)):
                yield event
            if decoder.done:
                break
            if gather := pace.pause_after(len(chunk), waited=waited, received=received):
                await pause(gather)  # the next pieces gather in one socket read
    except httpx.TransportError as exc:
        raise ModelConnectionError(
            f"{provider}: the stream from {where} broke off before the reply was complete: "
            f"{error_text(exc)}"
        ) from exc
    finally:
        await response.aclose()
    for event in decoder.flush():  # a last event the server did not end with a blank line
        yield event
    message = decoder.close()
    if not decoder.done and message.finish_reason is None:
        raise ModelConnectionError(
            f"{provider}: the stream from {where} ended before the reply was complete"
        )
    yield ModelResponse(message=message)


def merged(events: list[ModelEvent]) -> list[ModelEvent]:
    """One chunk's events with each run of text (or reasoning) pieces as one piece: a fast
    stream's read holds several, and each event costs every layer above a hop. A run's texts
    are joined once, not added piece by piece (a 16 KiB read holds some 200 pieces)."""
    if len(events) < 2:
        return events
    out: list[ModelEvent] = []
    run: list[str] = []
    for event in events:
        if isinstance(event, (TextDelta, ReasoningDelta)):
            if run and type(event) is type(out[-1]):
                run.append(event.text)
                continue
            _join(out, run)
            run = [event.text]
        else:
            _join(out, run)
            run = []
        out.append(event)
    _join(out, run)
    return out


def _join(out: list[ModelEvent], run: list[str]) -> None:
    """The run's texts as the one piece that began it, the last of `out`."""
    if len(run) > 1:
        first = out[-1]
        assert isinstance(first, (TextDelta, ReasoningDelta))
        out[-1] = replace(first, text="".join(run))


async def open_stream(
    send: Send,
    *,
    provider: str,
    where: str,
    sign_in_hint: str,
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    reach_hint: str = "",
) -> AsyncIterator[Notice | httpx.Response]:
    """Send until a response opens: a Notice for each wait before a retry, then the response.

    An error that will not pass, or a retry past the policy's bounds, raises instead.
    """
    attempt, waited = 0, 0.0
    last_answer: tuple[int, bytes] | None = None
    while True:
        failure: Exception
        response: httpx.Response | None = None
        try:
            response = await send()
        except httpx.TransportError as exc:
            failure = ModelConnectionError(
                f"{provider}: connection to {where} failed ({error_text(exc)}). {reach_hint}"
                if reach_hint
                else f"{provider}: connection to {where} failed: {error_text(exc)}"
            )
            failure.__cause__ = exc
        else:
            if response.status_code < 400:
                yield response
                return
            content, cut = await read_body(response, ERROR_BODY_BYTES)
            response = with_body(response, content, cut=cut)
            failure = http_error(
                response, provider=provider, sign_in_hint=sign_in_hint, where=where
            )
            answer = (response.status_code, content)
            if (
                isinstance(failure, BudgetExceeded)  # asking again cannot pass: never a storm
                or not policy.retryable(response.status_code)
                or policy.repeats(answer, last_answer)
            ):
                raise failure
            last_answer = answer
        delay = policy.delay_for(response, attempt)
        if attempt >= policy.max_retries or waited + delay > policy.max_total_wait:
            raise failure
        attempt += 1
        waited += delay
        yield Notice(
            text=f"{failure} — retrying in {delay:.1f} s ({attempt}/{policy.max_retries})",
            retry=True,
        )
        await sleep(delay)
