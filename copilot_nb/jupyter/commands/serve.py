"""`%copilot serve`: the kernel's model and tools for other programs, on this machine.

`%copilot serve [--port N] [--host H] [--allow-execution]` starts the proxy on the kernel's loop
(the OpenAI API under `/v1`, MCP at `/mcp`) and prints its address and token once;
`%copilot serve stop` stops it. Its tools are the kernel's whole set, its model the session's,
its approvals the session's: a call that asks shows its buttons under the cell that started
the server, when that cell came from a notebook; otherwise it is denied.
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.core.error import UsageError

from ...agent.session import CopilotSession
from ...errors import ConfigError
from .subcommand import Action

_SERVERS: dict[int, Any] = {}
"""The running proxy of each session (by id): one per kernel."""


def running(session: CopilotSession) -> Any:
    """The session's running proxy, or None."""
    server = _SERVERS.get(id(session))
    return server if server is not None and server.running else None


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="the address (default: 127.0.0.1)")
    parser.add_argument(
        "--allow-execution",
        action="store_true",
        help='run tools on the server (tool_execution: "auto", /mcp calls), through the '
        "session's approvals",
    )


async def stop(session: CopilotSession, options: argparse.Namespace, settings: Any) -> None:
    """`%copilot serve stop`."""
    server = _SERVERS.pop(id(session), None)
    if server is None or not server.running:
        print("copilot: no proxy is running")
        return
    await server.stop()
    print(f"copilot: the proxy at {server.url} stopped")


ACTIONS = (Action(name="stop", help="stop the running proxy", run=stop),)
"""`%copilot serve`'s sub-action; without one, it starts the proxy."""


async def start(session: CopilotSession, options: argparse.Namespace, settings: Any) -> None:
    """`%copilot serve [--port N] [--host H] [--allow-execution]`."""
    if running(session) is not None:
        raise UsageError(
            f"%copilot serve: already serving at {running(session).url}; stop it first"
        )
    from ...serve.server import ProxyServer

    server = ProxyServer(
        backend=session_backend(session, allow_execution=options.allow_execution),
        host=options.host,
        port=options.port,
    )
    try:
        await server.start()
    except ConfigError as exc:
        raise UsageError(f"%copilot serve: {exc}") from None
    _SERVERS[id(session)] = server
    print(announcement(server, options.allow_execution))


def session_backend(session: CopilotSession, *, allow_execution: bool) -> Any:
    """The proxy's backend over the kernel's session: its model, tools and approvals."""
    from ...serve.backend import Backend
    from ..approval_prompt import CellApprover, from_notebook

    kernel = getattr(session.shell, "kernel", None)
    approver = (
        CellApprover(session.shell, mode="widget")
        if kernel is not None and from_notebook(kernel)
        else None
    )

    def names() -> list[str]:
        return [session.current_model_spec()]

    return Backend(
        model_names=names,
        resolve=session.model,
        tools=lambda: session.tools_for(session.workspace()),
        workspace=session.workspace,
        approvals=lambda: session.approvals,
        approver=approver,
        allow_execution=allow_execution,
        tool_timeout=session.tool_timeout,
    )


def announcement(server: Any, allow_execution: bool) -> str:
    """What the user needs, once: where, the token, and how to use it."""
    model = server.backend.model_names()[0]
    lines = [
        f"copilot: serving at {server.url}  (OpenAI API under /v1, MCP at /mcp)",
        f"token (shown once): {server.token}",
        f'  from openai import OpenAI; client = OpenAI(base_url="{server.url}/v1", '
        f'api_key="<token>")',
        f'  client.chat.completions.create(model="{model}", messages=[...])',
        "server-side tool runs: "
        + ('allowed (tool_execution: "auto", /mcp calls)' if allow_execution else "off"),
    ]
    if warning := server.warning():
        lines.append(f"warning: {warning}")
    return "\n".join(lines)
