"""`%copilot mcp`: the workspace's MCP servers, their state, tools and prompts; add, remove,
restart, trust (approve a workspace's server before it starts) and forget (the approvals) of one.

Listing starts the servers not yet running (a cell with just `%copilot mcp ...` is awaited on the
kernel's loop, as a `%%copilot` cell is, so it waits for them without blocking the kernel).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from IPython.core.error import UsageError

from ...agent.session import CopilotSession, current_dir
from ...config import config_dir
from ...errors import ConfigError
from ...tools.mcp.config import USER_FILE, VSCODE_FILE, WORKSPACE_FILE, add_server, remove_server
from ...tools.mcp.connection import INSTALL_HINT
from ...tools.mcp.servers import McpServers, tool_name
from ..safe_html import Rendered, escape, table_html

USAGE = (
    "use %copilot mcp [list], %copilot mcp add NAME [--user] -- COMMAND [ARGS...], "
    "%copilot mcp add NAME [--user] URL, %copilot mcp remove NAME [--user], "
    "%copilot mcp restart NAME, %copilot mcp trust NAME, %copilot mcp forget NAME"
)


async def mcp(session: CopilotSession, words: list[str]) -> None:
    """Dispatch `%copilot mcp WORDS`."""
    from IPython.display import display

    action, rest = (words[0], words[1:]) if words else ("list", [])
    root = current_dir()
    servers = session.mcp
    servers.configure(root)
    if action == "list" and not rest:
        await servers.start()
        display(render_servers(servers))
    elif action == "add" and rest:
        name, where, entry = _entry(rest, root)
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
    elif action == "remove" and len(rest) in (1, 2):
        name = rest[0]
        where = _file(root, user="--user" in rest)
        if not remove_server(where, name):
            other = (
                ""
                if name not in servers.config.servers
                else (
                    f" (it is configured in {servers.config.servers[name].source}; edit that file)"
                )
            )
            raise UsageError(
                f"%copilot mcp remove: {_shown(where, root)} has no server {name!r}{other}"
            )
        servers.configure(root)
        print(f"copilot: MCP server {name!r} removed from {_shown(where, root)}")
    elif action == "restart" and len(rest) == 1:
        if rest[0] in servers.launch.held:
            raise UsageError(
                f"%copilot mcp restart: MCP server {rest[0]!r} has not started: it is "
                f"{servers.launch.held[rest[0]].state}; %copilot mcp trust {rest[0]} asks you"
            )
        try:
            await servers.restart(rest[0])
        except ConfigError as exc:
            raise UsageError(f"%copilot mcp restart: {exc}") from None
        display(render_servers(servers))
    elif action == "trust" and len(rest) == 1:
        await trust(session, rest[0])
        display(render_servers(servers))
    elif action == "forget" and len(rest) == 1:
        forgotten = servers.pins.forget(f"{root}::{rest[0]}")
        started = servers.launch.forget(root, rest[0])
        servers.reload()
        print(
            f"copilot: the approval of MCP server {rest[0]!r} is forgotten; its next "
            + ("start asks" if started else "call asks")
            if forgotten or started
            else f"copilot: MCP server {rest[0]!r} was not approved"
        )
    else:
        raise UsageError(USAGE)


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


def _entry(words: list[str], root: Path) -> tuple[str, Path, dict[str, object]]:
    """NAME [--user] (-- COMMAND ARGS... | URL) as a config entry and the file it goes to."""
    name, rest = words[0], words[1:]
    user = False
    if rest[:1] == ["--user"]:
        user, rest = True, rest[1:]
    if rest[:1] == ["--"] and len(rest) > 1:
        entry: dict[str, object] = {"command": rest[1], "args": rest[2:]}
    elif len(rest) == 1 and rest[0].startswith(("http://", "https://")):
        entry = {"url": rest[0]}
    else:
        raise UsageError(USAGE)
    from ...tools.mcp.config import server_config

    try:  # the same checks a config file gets
        server_config(name, entry, source="", root=root, environ=os.environ)
    except ConfigError as exc:
        raise UsageError(f"%copilot mcp add: {exc}") from None
    return name, _file(root, user=user), entry


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
