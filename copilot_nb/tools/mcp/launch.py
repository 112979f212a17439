"""A workspace's MCP servers wait for the user before anything of theirs runs.

`.mcp.json` and `.vscode/mcp.json` come with the folder the user opened: a cloned repository
can name any program as a "server", and a URL to send the user's tokens to. So, as in VS Code
and Claude Code, such a server is held: nothing is started and nothing is contacted until the
user approved it in a question that shows what it runs (command, arguments, working folder,
URL, and the names of the variables and headers it gets). The approval is pinned to the entry
as the file writes it (`trust.launch_digest`, in `mcp-approved.json`), so a changed entry asks
again. Secret-looking variables in it are filled in only once it is approved.

The question is an `ApprovalNeeded` of category `mcp-server`, asked when a turn would start the
server, through the turn's own approver (buttons, `input()`, a denial where nobody can answer),
never a cassette's: a replay cannot grant it. `approve_external = "deny"` and `--read-only`
refuse it unasked; `approve_external = "allow"` and `--yes` do not grant it (they approve calls
of servers that run, not a program a folder names). The user's own `<config dir>/mcp.json` is
not held: the user wrote it.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...events import ApprovalNeeded, ToolFinished, ToolStarted
from .config import ConfigProblem, McpConfig, ServerConfig, policy_refusal, server_config
from .trust import ServerPins, launch_digest

CATEGORY = "mcp-server"
"""The approval category of starting a workspace's server (the policy's `external` decides
whether it may be asked at all)."""
WAITING = "waiting for approval"
_asked = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class HeldServer:
    """A workspace server that is not started: what it would run, and why it waits."""

    config: ServerConfig
    """As shown: secret-looking variables left as written."""
    digest: str
    refused: str = ""
    """Why it was refused ('' while it waits for a question)."""
    final: bool = False
    """The user answered no: not asked again in this kernel until `%copilot mcp trust`."""

    @property
    def state(self) -> str:
        return f"refused: {self.refused}" if self.refused else WAITING


def launch_key(root: Path | None, name: str) -> str:
    """Where a server's start approval is kept in the pins file (apart from its tools' pin)."""
    return f"{root}::{name}::start"


def launch_details(config: ServerConfig) -> dict[str, Any]:
    """Everything the question shows (and the pin covers), secret values never among them."""
    details: dict[str, Any] = {"from": config.source}
    if config.command:
        details.update(command=config.command, args=list(config.args))
        details["working folder"] = config.cwd or "(the kernel's working folder)"
    else:
        details["url"] = config.url
    if config.env:
        details["environment variables it gets"] = sorted(config.env)
    if config.headers:
        details["headers it sends"] = sorted(config.headers)
    if config.secrets:
        details["secrets filled in once approved"] = [f"${{{n}}}" for n in config.secrets]
    return details


class LaunchGate:
    """Which workspace servers wait for approval, and the questions that settle it."""

    def __init__(self, pins: ServerPins) -> None:
        self.pins = pins
        self.held: dict[str, HeldServer] = {}
        self._answers: dict[str, HeldServer] = {}
        """Refusals kept for the kernel's life, by server name (for that digest only)."""

    def sort(
        self, root: Path, config: McpConfig, environ: Mapping[str, str] | None = None
    ) -> McpConfig:
        """The config with each approved workspace server filled in; the others held (listed in
        the config, never given a connection)."""
        env = os.environ if environ is None else environ
        servers = dict(config.servers)
        problems = list(config.problems)
        self.held = {}
        for name, server in config.servers.items():
            if not server.from_workspace or server.disabled:
                continue
            digest = launch_digest(server)
            if self.pins.get(launch_key(root, name)) != digest:
                earlier = self._answers.get(name)
                kept = earlier if earlier is not None and earlier.digest == digest else None
                self.held[name] = kept or HeldServer(config=server, digest=digest)
                continue
            try:
                filled = server_config(
                    name, server.entry, source=server.source, root=root, environ=env
                )
            except ConfigError as exc:
                del servers[name]
                problems.append(ConfigProblem(source=server.source, name=name, message=str(exc)))
                continue
            refusal = policy_refusal(filled)  # its secrets filled in: what will really run
            if refusal:
                del servers[name]
                problems.append(ConfigProblem(source=server.source, name=name, message=refusal))
            else:
                servers[name] = filled
        return McpConfig(servers=servers, problems=tuple(problems))

    def approve(self, root: Path | None, name: str) -> None:
        """Pin the server as it is now: it starts with the next turn (or listing)."""
        held = self.held.pop(name)
        self._answers.pop(name, None)
        self.pins.set(launch_key(root, name), held.digest)

    def forget(self, root: Path | None, name: str) -> bool:
        self._answers.pop(name, None)
        return self.pins.forget(launch_key(root, name))

    def reopen(self, name: str) -> None:
        """Ask about the server again (`%copilot mcp trust`), even after a no."""
        self._answers.pop(name, None)
        if name in self.held:
            self.held[name] = replace(self.held[name], refused="", final=False)

    def refuse(self, name: str, reason: str, *, final: bool) -> None:
        if name not in self.held:  # the config changed meanwhile
            return
        held = replace(self.held[name], refused=reason, final=final)
        self.held[name] = held
        if final:
            self._answers[name] = held

    def question(self, root: Path | None, name: str) -> ApprovalNeeded:
        """The question for one held server (a new one, or one changed since approved)."""
        config = self.held[name].config
        if self.pins.get(launch_key(root, name)) is not None:
            note = (
                f"MCP server {name!r} in {config.source} changed since you approved it; "
                "approving starts it as it is now, with your permissions (outside copilot_nb's "
                "sandbox)"
            )
        else:
            note = (
                f"{config.source} in this workspace names this server; approving starts it with "
                "your permissions (outside copilot_nb's sandbox) and trusts it until its entry "
                "changes"
            )
        return ApprovalNeeded(
            call_id=f"mcp-start-{next(_asked)}",
            name=f"MCP server {name}",
            arguments=launch_details(config),
            summary=config.target,
            category=CATEGORY,
            decision=asyncio.get_running_loop().create_future(),
            note=note,
        )

    async def questions(
        self,
        root: Path | None,
        external: str,
        ask: Callable[[ApprovalNeeded], None],
        *,
        only: str | None = None,
    ) -> AsyncGenerator[ToolStarted | ApprovalNeeded | ToolFinished, None]:
        """For each held server not yet answered: its question as a turn shows a call (started,
        asked, finished), answered by `ask` once shown; approved ones are pinned."""
        for name, held in list(self.held.items()):
            if held.final or only not in (None, name):
                continue
            if external == "deny":
                self.refuse(name, POLICY_REFUSAL, final=False)
                continue
            request = self.question(root, name)
            try:
                yield ToolStarted(
                    call_id=request.call_id,
                    name=request.name,
                    arguments=request.arguments,
                    summary=request.summary,
                )
                yield request
                ask(request)
                approved, reason = await request.decision
            finally:
                if not request.answered:  # the turn was stopped first: asked again next time
                    request.deny(UNANSWERED)
                    self.refuse(name, UNANSWERED, final=False)
            if approved:
                self.approve(root, name)
                outcome = "approved: it starts now"
            else:
                self.refuse(name, reason or "you denied it", final=True)
                outcome = f"not started: {self.held[name].refused}"
            yield ToolFinished(
                call_id=request.call_id,
                name=request.name,
                ok=approved,
                summary=outcome,
                content=outcome,
            )


UNANSWERED = "the run ended before you answered"
POLICY_REFUSAL = (
    "MCP servers are denied by the approval policy (CopilotMagics.approve_external = "
    '"deny", or --read-only)'
)
