"""The proxy as one ASGI app: the OpenAI API and the MCP endpoint, behind one gate.

The MCP SDK's own Starlette app (its Streamable HTTP transport at `/mcp`, with its session
manager as the app's lifespan) carries our `/v1/...` routes too, and `GateMiddleware` wraps the
whole: token, Host and Origin checks and the body limit hold for every path alike.
"""

from __future__ import annotations

from typing import Any

from .backend import Backend
from .http.not_served import handlers
from .http.security import Gate, GateMiddleware
from .mcp_endpoint import mcp_server
from .openai_routes import routes


def proxy_app(backend: Backend, gate: Gate) -> Any:
    """The ASGI app a server runs: `/v1/chat/completions`, `/v1/models`, `/v1/tools`, `/mcp`;
    any other route answers OpenAI's JSON error (`not_served.py`)."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = sorted(gate.allowed_hosts())
    app = mcp_server(backend).streamable_http_app(
        streamable_http_path="/mcp",
        custom_starlette_routes=routes(backend, gate.token),
        max_request_body_size=gate.max_body,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=[f"http://{host}" for host in hosts],
        ),
        host=gate.host,
    )
    for status, handler in handlers(gate.token_hint).items():
        app.add_exception_handler(status, handler)
    return GateMiddleware(app, gate)
