"""MCP servers an editor passes in `session/new`, as `.mcp.json` entries: the kernel reads them
after its files and asks before each first launch, as it does of a workspace's servers."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

_log = logging.getLogger(__name__)


def entries_of(servers: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """`{name: entry}` for each stdio or HTTP server; an SSE one is left out, saying why (the
    MCP client here speaks stdio and Streamable HTTP)."""
    out: dict[str, dict[str, Any]] = {}
    for server in servers:
        name = str(server.name)
        if getattr(server, "command", None):
            out[name] = {
                "command": server.command,
                "args": list(server.args or []),
                "env": {v.name: v.value for v in server.env or []},
            }
        elif getattr(server, "type", "") == "http":
            out[name] = {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
        else:
            _log.warning("MCP server %s left out: only stdio and HTTP servers are supported", name)
    return out
