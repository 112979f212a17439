"""What a server answers, read within bounds: a lookup's answer whole, an error's body in part.

A model list (`/v1/models`, Copilot's catalog), llama-server's `/props` and Ollama's `/api/show`
are asked before a turn or for `%copilot models`, which wait for them. httpx's timeout is per
read: a server that sent one byte every 2 s never tripped it and held a turn 44 s, and a 150 MB
list was read whole. So a lookup has one deadline for all of it (connecting, the headers, the
body) and a cap on its size, counted as the body streams in; and an error's body is read only
as far as its message could be worth showing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from ..errors import LookupFailed
from ..text import human_bytes

ERROR_BODY_BYTES = 64 * 2**10
"""Bytes of an error answer read: a provider's error is a sentence in a small JSON object."""
CUT_AT = "copilot_nb.cut_at"
"""The response extension that says a body was cut after this many bytes (`with_body`)."""
_BODY_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as it came over the wire, not the decoded bytes kept."""


@dataclass(frozen=True, kw_only=True)
class LookupLimits:
    """How long a lookup may take in all, and how large its answer may be."""

    deadline: float = 10.0
    """Seconds for the whole lookup: connecting, the headers and the body."""
    max_bytes: int = 8 * 2**20
    """Bytes of its answer read (decoded): the largest model lists (OpenRouter's) are ~1 MB."""


async def read_body(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """The first `limit` bytes of a streamed response's (decoded) body, and whether more
    followed; the response is closed, so nothing past the limit is read."""
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return b"".join(chunks)[:limit], True
    finally:
        await response.aclose()
    return b"".join(chunks), False


def with_body(response: httpx.Response, content: bytes, *, cut: bool = False) -> httpx.Response:
    """`response` (its status, headers and request) with `content` as its body, read, for code
    that reads `.json()` and `.text`; a body `cut` short says where (`CUT_AT`)."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _BODY_HEADERS]
    extensions = {**response.extensions, **({CUT_AT: len(content)} if cut else {})}
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=content,
        request=response.request,
        extensions=extensions,
    )


async def lookup(
    client: httpx.AsyncClient,
    request: httpx.Request,
    *,
    limits: LookupLimits,
    what: str,
    auth: httpx.Auth | None = None,
) -> httpx.Response:
    """`request`'s answer, read whole within `limits` (an error's body only in part). A server
    that takes longer, or says more, raises `LookupFailed` naming `what` was asked and why; one
    that cannot be reached raises httpx's `TransportError`, as a plain request does."""

    async def ask() -> httpx.Response:
        sent = client.send(
            request, stream=True, auth=auth if auth is not None else httpx.USE_CLIENT_DEFAULT
        )
        response = await sent
        failed = response.status_code >= 400
        limit = min(ERROR_BODY_BYTES, limits.max_bytes) if failed else limits.max_bytes
        content, cut = await read_body(response, limit)
        if cut and not failed:
            raise LookupFailed(
                f"{what} answered more than {human_bytes(limits.max_bytes)}, so copilot_nb "
                "stopped reading it"
            )
        return with_body(response, content, cut=cut)

    try:
        return await asyncio.wait_for(ask(), limits.deadline)
    except asyncio.TimeoutError:
        raise LookupFailed(
            f"{what} did not answer within {limits.deadline:g} s, so copilot_nb stopped waiting"
        ) from None
