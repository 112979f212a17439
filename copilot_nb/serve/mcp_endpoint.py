"""The server's own tools for any MCP client (VS Code, Claude Code), at `/mcp`.

Built on the official SDK's low-level `Server` and its Streamable HTTP transport, so the wire is
the SDK's. Tools are listed as the agent sees them (the kernel's whole set in a notebook, which
for an open notebook means its live cells); every call goes through `Backend.run_tool`, the same
approval as the agent's own calls: buttons in the notebook that started the server, or denied
when nobody can be asked. Calls run only when the server was started allowing execution.
A call of a tool the server does not have is the protocol error the MCP specification lists
for it (JSON-RPC -32602, Invalid params), not a result: the client's request names nothing
there is to run. A known tool's failure stays a result with `isError`, which a model reads.

A result's images (a cell's plot that `read_cell` or `run_cell` returns) go out as MCP
`ImageContent` blocks beside the text, which keeps their `[image/png 640x480]` lines and never
their base64. The endpoint does not know which model reads them, so they are scaled as for a
model nobody knows (`DEFAULT_IMAGE_LIMITS`: 1568 px on the long side, Anthropic's, the smallest
long side of the providers', and 5 MB, Anthropic's bytes per image): no provider refuses it or
scales its long side down further, and a plot is rarely drawn larger, so a model that could use
more (OpenAI's 2048, Gemini's 3072) loses little.

A client that declares the MCP Tasks extension follows a `run_code` or `run_cell` run as a task
(`mcp_tasks.py`); other calls are answered as above.
"""

from __future__ import annotations

from typing import Any

from ..models.capabilities import DEFAULT_IMAGE_LIMITS, fitted_image
from ..tools.registry import ToolOutput
from .backend import Backend
from .mcp_tasks import RunTask, RunTasks, created, serve_tasks

SERVER_NAME = "copilot_nb"
NOT_ALLOWED = "this proxy was started without --allow-execution: its tools can be listed, not run"
MAX_NAME_SHOWN = 200
"""An unknown tool's name is echoed back at most this long."""
CLIENT_IMAGES = DEFAULT_IMAGE_LIMITS
"""The size an image is sent to an MCP client at, whose model is not known (see above)."""


def mcp_server(backend: Backend) -> Any:
    """A low-level MCP `Server` whose tools are the backend's, read at each request."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tasks = RunTasks()

    async def list_tools(ctx: Any, params: Any) -> Any:
        # every tool, the rarely needed ones too: which of them a model sees is its host's choice
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=dict(spec.parameters),
                )
                for spec in (item.spec for item in backend.tools())
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        if backend.tools().get(params.name) is None:
            raise unknown_tool(params.name)
        arguments = dict(params.arguments or {})
        if not backend.allow_execution:
            again = backend.surface.restart_with("--allow-execution")
            output = ToolOutput(content=f"{params.name}: {NOT_ALLOWED}; {again}", is_error=True)
        elif tasks.offered(params.name, ctx):
            answer = await tasks.start(lambda: backend.run_tool(params.name, arguments))
            if isinstance(answer, RunTask):
                return created(answer, result_content)
            output = answer
        else:
            output = await backend.run_tool(params.name, arguments)
        return types.CallToolResult(content=result_content(output), is_error=output.is_error)

    server = Server(
        SERVER_NAME,
        version=_version(),
        instructions="The tools of a copilot_nb kernel or workspace: files, search, and in a "
        "notebook its live cells and variables.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    serve_tasks(server, tasks, result_content)
    return server


def unknown_tool(name: str) -> Exception:
    """The JSON-RPC error for a call of a tool this server does not have."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    shown = name if len(name) <= MAX_NAME_SHOWN else f"{name[:MAX_NAME_SHOWN]}..."
    return MCPError(INVALID_PARAMS, f"Unknown tool: {shown}; tools/list names this server's tools")


def result_content(output: ToolOutput) -> list[Any]:
    """A tool's output as MCP content: its text, then each of its images that can be sent,
    scaled to `CLIENT_IMAGES` (one that cannot stays only its line in the text)."""
    import mcp_types as types

    blocks: list[Any] = [types.TextContent(type="text", text=output.content)]
    for image in output.images:
        fitted = fitted_image(image, CLIENT_IMAGES)
        if fitted is not None:
            blocks.append(
                types.ImageContent(type="image", data=fitted.data, mime_type=fitted.media_type)
            )
    return blocks


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("copilot_nb")
    except PackageNotFoundError:
        return "0"
