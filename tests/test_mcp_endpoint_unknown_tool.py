"""An MCP client calls a tool the proxy's `/mcp` endpoint does not have: the answer is the
protocol error the MCP specification lists for it (JSON-RPC -32602, Invalid params), not a
tool result, whether or not the proxy runs tools; a known tool's failure stays a result."""

from __future__ import annotations

from typing import Any

import pytest

from tests.proxy_fixtures import proxy_for

__all__ = ["proxy_for"]


async def call(proxy: Any, name: str, arguments: dict[str, Any]) -> Any:
    """One `tools/call` through the official SDK client: its result, or the JSON-RPC error
    (`MCPError`) it answered with."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.exceptions import MCPError

    headers = {"Authorization": f"Bearer {proxy.token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{proxy.url}/mcp", http_client=http)) as client,
    ):
        try:
            return await client.call_tool(name, arguments)
        except MCPError as error:
            return error


@pytest.mark.parametrize("allow_execution", [True, False])
async def test_an_unknown_tool_is_invalid_params(proxy_for, allow_execution):
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    proxy = proxy_for([], allow_execution=allow_execution)

    answer = await call(proxy, "no_such_tool", {})

    assert isinstance(answer, MCPError), f"a result, not an error: {answer!r}"
    assert answer.code == INVALID_PARAMS == -32602
    assert answer.message.startswith("Unknown tool: no_such_tool")
    assert "tools/list" in answer.message, "it says what to do"


async def test_a_known_tools_failure_is_still_a_result_the_model_reads(proxy_for, root):
    proxy = proxy_for([], allow_execution=True)

    result = await call(proxy, "read_file", {"path": "missing.txt"})

    assert result.is_error and "missing.txt" in result.content[0].text
