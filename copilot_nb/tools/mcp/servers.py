"""The kernel's MCP servers, as tools: one catalogue shared by the cells and the chat panel.

It reads the config (again whenever a config file changes), starts the servers on first use
(`start`, when a turn assembles its tools; never at `%load_ext`), except a workspace's servers
the user has not approved (`launch.py`: `launches` asks, in the turn), and turns each server's tools
into our `Tool`s: named `server__tool`, filtered per server, in the approval category
`external`, trusted once approved while the server stays as it was (`trust.py`). A server with
resources gets a `server__read_resource` tool. When a server's tool list changes, the catalogue
records a `ToolsUpdated`; the session hands those to the loop before its next model request.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
from collections.abc import AsyncGenerator, Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config import config_dir
from ...errors import ConfigError
from ...events import ApprovalNeeded, ToolFinished, ToolStarted, ToolsUpdated
from ...kernel_bridge import running_loop
from ...text import clip, first_line
from ..registry import Tool, ToolOutput
from .config import McpConfig, config_files, load_config
from .connection import START_TIMEOUT, ServerConnection, ServerUnavailable
from .elicitation import Answer, Asker, elicit
from .launch import LaunchGate
from .results import describe_contents, tool_output
from .trust import PINS_FILE, ServerPins, ServerTrust, server_digest

FIRST_WAIT = 10.0
"""Seconds a turn waits for its servers to start; slower ones join it when they are up."""
MAX_DESCRIPTION = 2000
"""A tool description longer than this is cut: a server cannot fill the context window."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, kw_only=True)
class ToolProblem:
    """A tool of a server that is not offered, and why."""

    server: str
    tool: str
    message: str


class McpServers:
    """Every configured server of the current workspace, by name."""

    def __init__(
        self,
        *,
        user_dir: Callable[[], Path] = config_dir,
        pins: ServerPins | None = None,
    ) -> None:
        self.user_dir = user_dir
        self.pins = pins if pins is not None else ServerPins(user_dir() / PINS_FILE)
        self.launch = LaunchGate(self.pins)
        """The workspace's servers that wait for the user's approval before they start."""
        self.root: Path | None = None
        self.config = McpConfig()
        self.connections: dict[str, ServerConnection] = {}
        self.problems: list[ToolProblem] = []
        self._signature: tuple[Any, ...] = ()
        self._updates: list[ToolsUpdated] = []
        self._listed: dict[str, dict[str, str]] = {}
        """Each server's tools as last offered (name: description and schema)."""
        self._waiting = False
        self._built: dict[str, tuple[Any, list[Tool], list[ToolProblem]]] = {}
        """Each server's tools as built for its current listing."""
        self.first_wait = FIRST_WAIT
        """Seconds a turn waits for its servers to start."""
        self.start_timeout = START_TIMEOUT
        """Seconds a server may take to start before it is given up (until restarted)."""
        self._reported: dict[str, str] = {}
        """The start failure last shown for each server (each is shown once)."""
        self.given: dict[str, Any] = {}
        """Servers an editor passed with its session (`.mcp.json` entries by name), read after
        the files and held for approval as a workspace's are."""
        self.asker: Asker | None = None
        """Who puts a server's questions (elicitation) to the user: the running agent, set by
        the session for the length of a turn; None between turns, when they are cancelled."""

    # --- configuration ------------------------------------------------------------------------

    def configure(self, root: Path) -> McpConfig:
        """Read the config of `root` if it (or a config file) changed; servers removed or
        changed in the config are stopped (in the background)."""
        files = (_stamp(path) for path, _, _ in config_files(root, self.user_dir()))
        signature = (root, *files, json.dumps(self.given, sort_keys=True))
        if signature == self._signature:
            return self.config
        self._signature, self.root = signature, root
        loaded = load_config(root, self.user_dir(), given=self.given)
        self.config = self.launch.sort(root, loaded)
        held = self.launch.held
        for name, connection in list(self.connections.items()):
            wanted = self.config.servers.get(name)
            if wanted is None or wanted != connection.config or wanted.disabled or name in held:
                del self.connections[name]
                _in_background(connection.stop(), connection.close)
        for name, server in self.config.servers.items():
            if name not in self.connections and not server.disabled and name not in held:
                self.connections[name] = ServerConnection(
                    server, on_change=self._changed, on_elicit=self._elicit
                )
        return self.config

    async def _elicit(self, server: str, params: Any) -> Answer:
        """A server's question, put to the user by whoever runs the turn now."""
        return await elicit(self.asker, server, params)

    def reload(self) -> McpConfig:
        """Read the config again even if no file changed (an approval or its forgetting)."""
        self._signature = ()
        return self.configure(self.root or Path.cwd())

    async def launches(
        self, external: str, ask: Callable[[ApprovalNeeded], None], *, only: str | None = None
    ) -> AsyncGenerator[ToolStarted | ApprovalNeeded | ToolFinished, None]:
        """The questions about the workspace's servers that wait for approval, for a turn to
        show and `ask` to answer (see `launch.py`); approved ones get their connection."""
        approved = False
        try:
            async for event in self.launch.questions(self.root, external, ask, only=only):
                approved = approved or (isinstance(event, ToolFinished) and event.ok)
                yield event
        finally:
            if approved:
                self.reload()

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self, wait: float | None = None) -> None:
        """Start every enabled server not yet running; wait up to `wait` s (`first_wait`) for
        them all. Those still starting join later, and those that fail are told once (each a
        `ToolsUpdated`); `%copilot mcp` shows their state."""
        pending = [
            c for c in self.connections.values() if c.state in ("stopped", "starting", "crashed")
        ]
        if not pending:
            return
        self._waiting = True
        tasks = [asyncio.ensure_future(self._start_one(c)) for c in pending]
        try:
            await asyncio.wait(tasks, timeout=self.first_wait if wait is None else wait)
        finally:
            self._waiting = False

    async def _start_one(self, connection: ServerConnection) -> None:
        """Start one server; one that comes up after the turn began is a change of its tools."""
        name = connection.config.name
        try:
            await connection.start(self.start_timeout)
        except ServerUnavailable as exc:
            if self._reported.get(name) != str(exc):
                self._reported[name] = str(exc)
                note = f"{exc}\n(its tools are not offered; %copilot mcp shows the servers)"
                self._updates.append(ToolsUpdated(source=f"MCP server {name}", note=note))
            return
        self._reported.pop(name, None)
        if self._waiting:
            self._listed[connection.config.name] = _listing(connection)
        else:
            self._changed(connection)

    async def restart(self, name: str) -> None:
        connection = self.connections.get(name)
        if connection is None:
            raise ConfigError(f"no MCP server named {name!r} is configured")
        await connection.stop()
        connection.crashes = 0
        await connection.start()
        self._changed(connection)

    async def stop(self) -> None:
        """Stop every server (kernel shutdown, `%unload_ext`): no process outlives the kernel."""
        connections = list(self.connections.values())
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        for connection in connections:
            connection.close()
        self.connections = {}
        self._signature = ()

    async def settled(self) -> None:
        """Wait (briefly) for tool lists announced as changed to be read again."""
        await asyncio.gather(*(c.settled() for c in self.connections.values()))

    # --- changes ------------------------------------------------------------------------------

    def _changed(self, connection: ServerConnection) -> None:
        """Compare the server's tools with what was last offered; record the difference."""
        name = connection.config.name
        now = _listing(connection)
        before = self._listed.get(name, {})
        self._listed[name] = now
        if before == now:
            return
        self._updates.append(
            ToolsUpdated(
                source=f"MCP server {name}",
                added=tuple(tool_name(name, t) for t in now if t not in before),
                removed=tuple(tool_name(name, t) for t in before if t not in now),
                changed=tuple(
                    tool_name(name, t) for t in now if t in before and before[t] != now[t]
                ),
            )
        )

    def take_updates(self) -> list[ToolsUpdated]:
        """The changes recorded since the last call (each shown once)."""
        updates, self._updates = self._updates, []
        return updates

    # --- tools --------------------------------------------------------------------------------

    def tools(self, taken: Collection[str] = ()) -> list[Tool]:
        """The running servers' tools, filtered; a name in `taken` (a built-in or a tool of the
        user's) needs the server's `override` entry, which names the server's own tool. Problems
        are kept in `self.problems`. Built once per listing (a turn, and each rebuild, asks)."""
        found: list[Tool] = []
        self.problems = []
        for name, connection in self.connections.items():
            if not connection.usable:
                continue
            self._listed.setdefault(name, _listing(connection))
            prefix = f"{name}__"
            key = (id(connection.tools), frozenset(n for n in taken if n.startswith(prefix)))
            cached = self._built.get(name)
            if cached is None or cached[0] != key:
                cached = (key, *self._server_tools(connection, taken))
                self._built[name] = cached
            found.extend(cached[1])
            self.problems.extend(cached[2])
        return found

    def _server_tools(
        self, connection: ServerConnection, taken: Collection[str]
    ) -> tuple[list[Tool], list[ToolProblem]]:
        name = connection.config.name
        digest = server_digest(connection.config, connection.tools, connection.resources)
        trust = ServerTrust(self.pins, f"{self.root}::{name}", digest, name)
        found: list[Tool] = []
        problems: list[ToolProblem] = []
        for item in _distinct(connection, problems):
            if connection.config.allows(item.name):
                built = self._tool(connection, item, trust, taken, problems)
                if built is not None:
                    found.append(built)
        if connection.has_resources:
            reader = resource_tool(connection, trust)
            if reader.name not in {t.name for t in found} and reader.name not in taken:
                found.append(reader)
        return found, problems

    def _tool(
        self,
        connection: ServerConnection,
        item: Any,
        trust: ServerTrust,
        taken: Collection[str],
        problems: list[ToolProblem],
    ) -> Tool | None:
        server = connection.config
        name = tool_name(server.name, item.name)
        if name in taken and item.name not in server.override:
            problems.append(
                ToolProblem(
                    server=server.name,
                    tool=item.name,
                    message=f"{name} is the name of a built-in tool or one of yours; list "
                    f'"{item.name}" in the server\'s "override" to replace that tool',
                )
            )
            return None
        description = clip(str(item.description or item.name), MAX_DESCRIPTION)
        try:
            return Tool(
                name=name,
                description=f"{description}\n(from MCP server {server.name})",
                parameters=_object_schema(item.input_schema),
                function=functools.partial(_call, connection, item.name, name),
                category="external",
                override=item.name in server.override,
                trust=trust,
            )
        except ConfigError as exc:
            problems.append(ToolProblem(server=server.name, tool=item.name, message=str(exc)))
            return None


def _distinct(connection: ServerConnection, problems: list[ToolProblem]) -> list[Any]:
    """The server's tools, one per `server__tool` name: of two that become the same name
    (`a.b` and `a_b`), the one named so already is kept (else the first listed), the other is
    left out with its reason."""
    server = connection.config.name
    chosen: dict[str, Any] = {}
    for item in sorted(connection.tools, key=lambda t: _UNSAFE.search(str(t.name)) is not None):
        name = tool_name(server, str(item.name))
        kept = chosen.setdefault(name, item)
        if kept is not item:
            problems.append(
                ToolProblem(
                    server=server,
                    tool=str(item.name),
                    message=f"it becomes {name}, the name of the server's tool "
                    f"{kept.name!r}, so it is left out (a tool name may hold letters, digits, "
                    "'_' and '-')",
                )
            )
    return [t for t in connection.tools if chosen.get(tool_name(server, str(t.name))) is t]


def tool_name(server: str, tool: str) -> str:
    """`server__tool`, with characters providers refuse replaced and long names shortened
    (a hash keeps them apart)."""
    name = f"{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def resource_tool(connection: ServerConnection, trust: ServerTrust) -> Tool:
    """`server__read_resource(uri)`: the server's resources, readable by the model."""
    server = connection.config.name
    known = "\n".join(
        f"- {r.uri}" + (f": {first_line(str(r.description or r.name), 100)}" if r.name else "")
        for r in connection.resources
    )
    return Tool(
        name=tool_name(server, "read_resource"),
        description=f"Read a resource of MCP server {server} by its URI."
        + (f" Resources it lists:\n{known}" if known else ""),
        parameters={
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "the resource's URI"}},
            "required": ["uri"],
            "additionalProperties": False,
        },
        function=functools.partial(_read, connection),
        category="external",
        trust=trust,
    )


async def _call(
    connection: ServerConnection, tool: str, label: str, **arguments: Any
) -> ToolOutput:
    try:
        result = await connection.call_tool(tool, arguments, connection.config.timeout)
    except ServerUnavailable as exc:
        return ToolOutput(content=str(exc), is_error=True, summary=first_line(str(exc), 80))
    return tool_output(result, label=label)


async def _read(connection: ServerConnection, uri: str) -> ToolOutput:
    try:
        result = await connection.read_resource(uri, connection.config.timeout)
    except ServerUnavailable as exc:
        return ToolOutput(content=str(exc), is_error=True, summary=first_line(str(exc), 80))
    text = "\n".join(describe_contents(c) for c in result.contents) or "(empty resource)"
    return ToolOutput(content=clip(text, 100_000), summary=first_line(text, 80))


def _listing(connection: ServerConnection) -> dict[str, str]:
    """A server's tools as compared for changes: name to description and schema."""
    if not connection.usable:
        return {}
    return {str(t.name): f"{t.description}\0{t.input_schema}" for t in connection.tools}


def _object_schema(schema: Any) -> dict[str, Any]:
    """The server's input schema; one without a root `type: object` gets it (as MCP requires)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    return schema if schema.get("type") == "object" else {**schema, "type": "object"}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _in_background(stopping: Any, then: Callable[[], None]) -> None:
    """Stop a connection without waiting for it (a config change noticed at a turn's start)."""
    loop = running_loop()
    if loop is None:
        stopping.close()
        then()
        return
    task = loop.create_task(stopping)
    task.add_done_callback(lambda _: then())
