"""What the proxy answers for a route it does not serve: OpenAI's JSON error, never plain text.

OpenAI's clients read `{"error": {...}}` from any failure; a bare `Not Found` page became an
exception without a message. Routes a client commonly tries get their own words: a stored
response (`/v1/responses/{id}`: the proxy stores none), and OAuth discovery, which MCP clients try
after a 401 (the proxy has a token, not OAuth).
"""

from __future__ import annotations

from typing import Any

from ..openai.chat_request import ApiError
from .replies import error_response
from .security import DISCOVERY_PREFIX

SERVED = (
    "POST /v1/chat/completions, POST /v1/responses, GET /v1/models, GET /v1/models/{id}, "
    "GET /v1/tools and /mcp"
)

STORED = (
    "This proxy stores no responses ({path}): a response is answered once, at POST "
    "/v1/responses (store is always false); send the whole conversation in each request's input."
)


def not_served(method: str, path: str, *, token_hint: str, status: int = 404) -> ApiError:
    """The error for a request no route takes (`status` 405 for a route without its method)."""
    if path.startswith("/v1/responses/"):
        return ApiError(STORED.format(path=path), status=404, code="not_stored")
    if path.startswith(DISCOVERY_PREFIX):
        return ApiError(
            "This server does not use OAuth: there is no authorization server to discover. "
            f"Authenticate with its token instead: {token_hint}, as `Authorization: Bearer "
            "<token>`.",
            status=404,
            code="oauth_not_supported",
        )
    if status == 405:
        return ApiError(
            f"Invalid method for URL ({method} {path}); this proxy serves {SERVED}.",
            status=405,
            code="method_not_allowed",
        )
    return ApiError(
        f"Invalid URL ({method} {path}); this proxy serves {SERVED}.",
        status=404,
        code="unknown_url",
    )


def handlers(token_hint: str) -> dict[int, Any]:
    """Starlette exception handlers for 404 and 405, answering in OpenAI's error shape."""

    async def answer(request: Any, exc: Any) -> Any:
        status = int(getattr(exc, "status_code", 404))
        error = not_served(request.method, request.url.path, token_hint=token_hint, status=status)
        return error_response(error)

    return {404: answer, 405: answer}
