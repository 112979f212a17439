"""An MCP server whose one tool, `meta`, answers with the `_meta` its call arrived with (the
W3C trace context a client sends there): `python -m tests.mcp_servers.trace_meta`."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer


def build() -> MCPServer:
    server = MCPServer("traced")

    @server.tool()
    def meta(ctx: Context) -> str:
        """The `_meta` of this call, as JSON."""
        found: Any = ctx.request_context.meta or {}
        if hasattr(found, "model_dump"):
            found = found.model_dump(by_alias=True, exclude_none=True)
        return json.dumps(dict(found))

    return server


if __name__ == "__main__":
    build().run()
