"""`/v1/chat/completions`, `/v1/responses`, `/v1/models` and `/v1/tools`: the OpenAI API over
the backend.

Pass-through (the default): the client's messages and tools go to the model, the model's tool
calls come back to the client to run (`upstream.py` relays the stream; `responses_route.py` serves
the Responses API the same way). `tool_execution: "auto"` runs the agent loop on the server
(`auto_mode.py`), when the server was started allowing it.
"""

from __future__ import annotations

import fnmatch
import time
import uuid
from typing import Any

from ..errors import ConfigError, ModelError
from .backend import Backend
from .http.replies import error_response, json_response
from .openai.api_errors import listed
from .openai.chat_request import ApiError, parse_chat_request
from .openai.chat_response import ChunkEncoder, completion_body
from .relayed import Relay, model_credentials
from .responses_route import create_response
from .upstream import (
    model_unavailable,
    read_json,
    stream_response,
    upstream_error,
    upstream_options,
)

MAX_TOOL_ROUNDS = 10
"""Rounds of server-side tool calls when the request does not say (`max_tool_rounds`)."""


def routes(backend: Backend, token: str = "") -> list[Any]:
    """The Starlette routes of the OpenAI API; `token` is the proxy's own, masked (with the
    model's key) in whatever an upstream failure relays."""
    from starlette.routing import Route

    async def chat(request: Any) -> Any:
        return await chat_completions(backend, request, token)

    async def responses(request: Any) -> Any:
        return await create_response(backend, request, token)

    async def models(request: Any) -> Any:
        return json_response(models_body(backend))

    async def one_model(request: Any) -> Any:
        return model_response(backend, request.path_params["model"])

    async def tools(request: Any) -> Any:
        params = request.query_params
        return json_response(tools_body(backend, name=params.get("name"), tags=params.get("tags")))

    return [
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model:path}", one_model, methods=["GET"]),
        Route("/v1/tools", tools, methods=["GET"]),
    ]


def models_body(backend: Backend) -> dict[str, Any]:
    return {"object": "list", "data": [model_object(name) for name in backend.model_names()]}


def model_object(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "copilot_nb"}


def model_response(backend: Backend, name: str) -> Any:
    """`GET /v1/models/{id}`: the model when it is served here, else OpenAI's 404."""
    names = backend.model_names()
    if name in names:
        return json_response(model_object(name))
    error = ApiError(
        f"The model '{name}' does not exist on this proxy; it serves {listed(names)}.",
        status=404,
        param="model",
        code="model_not_found",
    )
    return error_response(error)


def tools_body(backend: Backend, *, name: str | None, tags: str | None) -> dict[str, Any]:
    """The server's tools in OpenAI's tool format; `name` is a glob, `tags` approval categories
    (read, read-secret, edit, execute, external), comma-separated."""
    wanted = {t.strip() for t in tags.split(",") if t.strip()} if tags else None
    listed = []
    for item in backend.tools():
        if name and not fnmatch.fnmatchcase(item.name, name):
            continue
        if wanted is not None and item.category not in wanted:
            continue
        listed.append(
            {
                "type": "function",
                "function": {
                    "name": item.name,
                    "description": item.description,
                    "parameters": dict(item.parameters),
                },
                "tags": [item.category],
            }
        )
    return {"object": "list", "data": listed}


async def chat_completions(backend: Backend, request: Any, token: str = "") -> Any:
    try:
        body = await read_json(request)
        wants_tools = isinstance(body, dict) and body.get("use_notebook_tools") is True
        chat = parse_chat_request(
            body,
            models=backend.model_names(),
            kernel_tools=[item.name for item in backend.tools()] if wants_tools else (),
        )
        if chat.tool_execution == "auto" and not backend.allow_execution:
            again = backend.surface.restart_with("--allow-execution")
            raise ApiError(
                f'tool_execution "auto" is off on this server; {again} to let it run tools',
                status=403,
                type="permission_error",
                param="tool_execution",
                code="tool_execution_disabled",
            )
        model = backend.model(chat.model)
    except ApiError as exc:
        return error_response(exc)
    except ConfigError as exc:
        return model_unavailable(exc, token)
    relay = Relay.of(token, model_credentials(model))
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    encoder = ChunkEncoder(
        model=chat.model,
        completion_id=completion_id,
        created=created,
        include_usage=chat.include_usage,
    )
    if chat.tool_execution == "auto":
        from .auto_mode import auto_response

        return await auto_response(backend, chat, model, encoder, relay)
    if not chat.stream:
        try:
            message = await model.complete(list(chat.messages), **upstream_options(chat))
        except (ModelError, ConfigError) as exc:
            return upstream_error(exc, relay)
        return json_response(
            completion_body(message, model=chat.model, completion_id=completion_id, created=created)
        )
    return await stream_response(model, chat, encoder, relay)
