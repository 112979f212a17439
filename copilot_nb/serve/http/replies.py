"""The proxy's HTTP responses: JSON bodies, OpenAI's error shape, and event streams."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ..openai.chat_request import ApiError


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import Response

    return Response(
        json.dumps(body, ensure_ascii=False),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def error_response(error: ApiError, headers: dict[str, str] | None = None) -> Any:
    return json_response(error.body(), error.status, headers)


def event_stream(chunks: AsyncIterator[bytes]) -> Any:
    from starlette.responses import StreamingResponse

    return StreamingResponse(
        chunks,
        media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
    )
