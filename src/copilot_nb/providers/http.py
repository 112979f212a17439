"""What every HTTP provider shares: one client per event loop, and provider errors in plain words."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from ..errors import AuthError, ModelHTTPError

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""Generous read timeout: a long reply from a slow local model is normal, a dead connect is not."""


class LoopBoundClient:
    """An httpx.AsyncClient made lazily on the running loop, remade if the loop changes.

    A pooled connection belongs to the loop that opened it; a kernel, a script and a test runner
    may each drive the same model object from different loops.
    """

    def __init__(self, *, timeout: httpx.Timeout, client: httpx.AsyncClient | None = None) -> None:
        self._timeout = timeout
        self._given = client
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self._timeout)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None


def provider_message(body: Any) -> str:
    """The human part of a provider's error body, whatever its shape."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or json.dumps(error))
        if isinstance(error, str):
            return error
        return json.dumps(body)
    return str(body).strip()[:500]


def http_error(response: httpx.Response, *, provider: str, sign_in_hint: str) -> ModelHTTPError:
    """Turn an HTTP error response into our exception, with the provider's own message."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    detail = provider_message(body) or response.reason_phrase
    status = response.status_code
    message = f"{provider} answered HTTP {status}: {detail}"
    if status in (401, 403):
        return AuthError(f"{message}. {sign_in_hint}", status=status, body=body)
    return ModelHTTPError(message, status=status, body=body)
