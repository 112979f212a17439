"""The server's own tools for any MCP client (VS Code, Claude Code), at `/mcp`.

Built on the official SDK's low-level `Server` and its Streamable HTTP transport, so the wire is
the SDK's. Tools are listed as the agent sees them (the kernel's whole set in a notebook, which
for an open notebook means its live cells); every call goes through `Backend.run_tool`, the same
approval as the agent's own calls: buttons in the notebook that started the server, or denied
when nobody can be asked. Calls run only when the server was started allowing execution.
"""

from __future__ import annotations

from typing import Any

from .backend import Backend

SERVER_NAME = "copilot_nb"
NOT_ALLOWED = "this proxy was started without --allow-execution: its tools can be listed, not run"


def mcp_server(backend: Backend) -> Any:
    """A low-level MCP `Server` whose tools are the backend's, read at each request."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=dict(spec.parameters),
                )
                for spec in backend.tools().list_tools()
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        if not backend.allow_execution:
            again = backend.surface.restart_with("--allow-execution")
            output_text, failed = f"{params.name}: {NOT_ALLOWED}; {again}", True
        else:
            output = await backend.run_tool(params.name, dict(params.arguments or {}))
            output_text, failed = output.content, output.is_error
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=output_text)], is_error=failed
        )

    return Server(
        SERVER_NAME,
        version=_version(),
        instructions="The tools of a copilot_nb kernel or workspace: files, search, and in a "
        "notebook its live cells and variables.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("copilot_nb")
    except PackageNotFoundError:
        return "0"
