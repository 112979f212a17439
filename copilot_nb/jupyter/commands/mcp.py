"""`%copilot mcp`: the workspace's MCP servers, their state, tools and prompts; add, remove,
restart, trust (approve a workspace's server before it starts) and forget (the approvals) of one.

Listing starts the servers not yet running (a cell with just `%copilot mcp ...` is awaited on the
kernel's loop, as a `%%copilot` cell is, so it waits for them without blocking the kernel).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ...agent.session import CopilotSession, current_dir
from ...config import config_dir
from ...errors import ConfigError
from ...tools.mcp.config import USER_FILE, VSCODE_FILE, WORKSPACE_FILE, add_server, remove_server
from ...tools.mcp.connection import INSTALL_HINT
from ...tools.mcp.servers import McpServers, tool_name
from ..safe_html import Rendered, escape, table_html
from .subcommand import Action

USAGE = (
    "%(prog)s [list] | %(prog)s add NAME [--user] -- COMMAND [ARGS...] | "
    "%(prog)s add NAME [--user] URL | %(prog)s remove NAME [--user] | "
    "%(prog)s restart NAME | %(prog)s trust NAME | %(prog)s forget NAME"
)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = USAGE  # the sub-actions' own usage lines start from the bare prog


def _named(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the server's name")


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    _named(parser)
    parser.add_argument(
        "--user", action="store_true", help="in your own config, not the workspace's"
    )
    parser.add_argument("target", nargs="+", metavar="COMMAND|URL", help="what runs, or its URL")


def _remove_arguments(parser: argparse.ArgumentParser) -> None:
    _named(parser)
    parser.add_argument("--user", action="store_true", help="from your own config")


def _servers(session: CopilotSession) -> tuple[McpServers, Path]:
    """The session's servers, configured for the folder the kernel works in."""
    root = current_dir()
    servers = session.mcp
    servers.configure(root)
    return servers, root


async def list_servers(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot mcp [list]`: start the servers not yet running and show them all."""
    from IPython.display import display

    servers, _ = _servers(session)
    await servers.start()
    display(render_servers(servers))


async def add(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot mcp add NAME [--user] -- COMMAND [ARGS...]` or `... NAME URL`."""
    servers, root = _servers(session)
    name = args.name
    where, entry = _entry(name, args.target, root, user=args.user)
    try:
        add_server(where, name, entry)
    except ConfigError as exc:
        raise UsageError(f"%copilot mcp add: {exc}") from None
    servers.configure(root)
    if name in servers.launch.held:  # you typed it: the start is approved as written
        servers.launch.approve(root, name)
        servers.reload()
    print(
        f"copilot: MCP server {name!r} added to {_shown(where, root)}; it starts with the next request"
    )


async def remove(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot mcp remove NAME [--user]`: only from the file `add` writes."""
    servers, root = _servers(session)
    name = args.name
    where = _file(root, user=args.user)
    if not remove_server(where, name):
        other = (
            ""
            if name not in servers.config.servers
            else (f" (it is configured in {servers.config.servers[name].source}; edit that file)")
        )
        raise UsageError(
            f"%copilot mcp remove: {_shown(where, root)} has no server {name!r}{other}"
        )
    servers.configure(root)
    print(f"copilot: MCP server {name!r} removed from {_shown(where, root)}")


async def restart(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot mcp restart NAME`: stop a server and start it again."""
    from IPython.display import display

    servers, _ = _servers(session)
    name = args.name
    if name in servers.launch.held:
        raise UsageError(
            f"%copilot mcp restart: MCP server {name!r} has not started: it is "
            f"{servers.launch.held[name].state}; %copilot mcp trust {name} asks you"
        )
    try:
        await servers.restart(name)
    except ConfigError as exc:
        raise UsageError(f"%copilot mcp restart: {exc}") from None
    display(render_servers(servers))


async def trust_server(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot mcp trust NAME`: ask whether a workspace's server may start."""
    from IPython.display import display

    servers, _ = _servers(session)
    await trust(session, args.name)
    display(render_servers(servers))


async def forget(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot mcp forget NAME`: forget the approvals of a server."""
    servers, root = _servers(session)
    name = args.name
    forgotten = servers.pins.forget(f"{root}::{name}")
    started = servers.launch.forget(root, name)
    servers.reload()
    print(
        f"copilot: the approval of MCP server {name!r} is forgotten; its next "
        + ("start asks" if started else "call asks")
        if forgotten or started
        else f"copilot: MCP server {name!r} was not approved"
    )


ACTIONS = (
    Action(
        name="list",
        help="the servers, their state, tools and prompts (the default)",
        run=list_servers,
    ),
    Action(
        name="add",
        help="add a server: a command after --, or a URL",
        run=add,
        arguments=_add_arguments,
        usage="%(prog)s NAME [--user] -- COMMAND [ARGS...] | %(prog)s NAME [--user] URL",
    ),
    Action(
        name="remove", help="remove a server you added", run=remove, arguments=_remove_arguments
    ),
    Action(name="restart", help="stop a server and start it again", run=restart, arguments=_named),
    Action(
        name="trust",
        help="show what a workspace's server runs and ask whether it may start",
        run=trust_server,
        arguments=_named,
    ),
    Action(name="forget", help="forget the approvals of a server", run=forget, arguments=_named),
)
"""`%copilot mcp`'s sub-actions, in the order its help and the tab list them."""


async def trust(session: CopilotSession, name: str) -> None:
    """Ask, as a `%%copilot` cell would, whether a workspace's server may start (showing all it
    runs); approved, it starts now. Asked again even after a no."""
    from IPython.display import display

    from ..approval_prompt import CellApprover
    from ..live_channel import live_channel

    servers = session.mcp
    if name not in servers.launch.held:
        config = servers.config.servers.get(name)
        if config is None:
            raise UsageError(f"%copilot mcp trust: no MCP server named {name!r} is configured")
        why = "is approved" if config.from_workspace else f"comes from your own {config.source}"
        print(f"copilot: MCP server {name!r} {why}; nothing to approve")
        return
    servers.launch.reopen(name)
    shell = session.shell
    approver = CellApprover(shell, display=display, widgets_attached=live_channel(shell).attached)
    async for _ in servers.launches("ask", approver.answer, only=name):
        pass  # the approver shows the question itself
    await servers.start()


def _entry(
    name: str, target: list[str], root: Path, *, user: bool
) -> tuple[Path, dict[str, object]]:
    """A URL, or a COMMAND and its ARGS, as a config entry and the file it goes to."""
    entry: dict[str, object]
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        entry = {"url": target[0]}
    else:
        entry = {"command": target[0], "args": target[1:]}
    from ...tools.mcp.config import server_config

    try:  # the same checks a config file gets
        server_config(name, entry, source="", root=root, environ=os.environ)
    except ConfigError as exc:
        raise UsageError(f"%copilot mcp add: {exc}") from None
    return _file(root, user=user), entry


def _file(root: Path, *, user: bool) -> Path:
    return config_dir() / USER_FILE if user else root / WORKSPACE_FILE


def _shown(path: Path, root: Path) -> str:
    return WORKSPACE_FILE if path == root / WORKSPACE_FILE else str(path)


def render_servers(servers: McpServers) -> Rendered:
    """One row per server (state, what runs, its tools and prompts), then what is wrong."""
    head = ("server", "state", "runs", "from", "tools", "prompts")
    rows: list[tuple[str, ...]] = []
    for name, config in servers.config.servers.items():
        connection = servers.connections.get(name)
        state = "disabled" if config.disabled else connection.state if connection else "stopped"
        if connection is not None and connection.error:
            state += f": {connection.error}"
        held = servers.launch.held.get(name)
        if held is not None:
            config, state = held.config, held.state
        tools = (
            ", ".join(tool_name(name, t.name) for t in connection.tools if config.allows(t.name))
            if connection is not None
            else ""
        )
        prompts = ", ".join(p.name for p in connection.prompts) if connection else ""
        rows.append(
            (name, state, f"{config.transport}: {config.target}", config.source, tools, prompts)
        )
    notes = [
        f"{p.source}: {p.name + ': ' if p.name else ''}{p.message}" for p in servers.config.problems
    ]
    notes += [f"{p.server}: tool {p.tool}: {p.message}" for p in servers.problems]
    notes += [
        f"{name}: {held.config.source} in this workspace names it, and it starts only once you "
        f"approve it: %copilot mcp trust {name} shows what it runs and asks"
        for name, held in servers.launch.held.items()
    ]
    if importlib.util.find_spec("mcp") is None and servers.config.servers:
        notes.insert(0, INSTALL_HINT)
    if not rows:
        notes.append(
            f"no MCP servers are configured; add one with %copilot mcp add, or in {WORKSPACE_FILE}, "
            f"{VSCODE_FILE} or {config_dir() / USER_FILE}"
        )
    html = (table_html(head, rows) if rows else "") + "".join(
        f"<p>{escape(note)}</p>" for note in notes
    )
    plain = "\n".join(
        [
            *(
                f"{r[0]:<14} {r[1]:<10} {r[2]}\n    tools: {r[4] or '-'}; prompts: {r[5] or '-'}"
                for r in rows
            ),
            *notes,
        ]
    )
    return Rendered(html, plain)
