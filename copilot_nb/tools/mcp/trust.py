"""Which MCP servers the user approved, each pinned to what it was when approved.

A server's pin is a hash of its command (or URL), of its tools' names, descriptions and
schemas, and of its resources' URIs, names and descriptions (they are in its `read_resource`
tool's description). A description is text the model obeys; one that changes after approval is a
known attack ("rug pull"), so a server whose pin no longer matches asks again, and the question
says why. A workspace's server is pinned before it starts, too (`launch_digest`, `launch.py`). Pins are kept in `<config dir>/mcp-approved.json` (the agent cannot write there), keyed by
the workspace and the server's name.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...config import private_dir
from .config import ServerConfig

PINS_FILE = "mcp-approved.json"


def server_digest(config: ServerConfig, tools: Iterable[Any], resources: Iterable[Any] = ()) -> str:
    """The pin: what runs, and every tool and resource as the model would read it."""
    listed = sorted(
        (str(t.name), str(t.description or ""), json.dumps(t.input_schema, sort_keys=True))
        for t in tools
    )
    named = sorted(
        (str(r.uri), str(r.name or ""), str(getattr(r, "description", None) or ""))
        for r in resources
    )
    text = json.dumps([config.identity(), listed] + ([named] if named else []))
    return hashlib.sha256(text.encode()).hexdigest()


def launch_digest(config: ServerConfig) -> str:
    """The pin of a workspace server's start: its entry as the file writes it (command,
    arguments, working folder, URL, the environment and headers with their `${VAR}`s unfilled),
    so a changed entry asks again and a renewed token does not."""
    entry = config.entry
    text = json.dumps(
        [entry.get(key) for key in ("type", "command", "args", "cwd", "url", "env", "headers")],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class ServerPins:
    """The approved pins, read from and written to one file (None: kept in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._pins: dict[str, str] | None = None

    def get(self, key: str) -> str | None:
        return self._load().get(key)

    def set(self, key: str, digest: str) -> None:
        pins = self._load()
        pins[key] = digest
        self._save(pins)

    def forget(self, key: str) -> bool:
        pins = self._load()
        if pins.pop(key, None) is None:
            return False
        self._save(pins)
        return True

    def _load(self) -> dict[str, str]:
        if self._pins is None:
            self._pins = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = {}
                if isinstance(data, dict):
                    self._pins = {str(k): str(v) for k, v in data.items()}
        return self._pins

    def _save(self, pins: dict[str, str]) -> None:
        if self.path is None:
            return
        private_dir(self.path.parent)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # owner-only
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(pins, indent=1, sort_keys=True) + "\n")
        os.replace(temporary, self.path)


class ServerTrust:
    """One server's standing approval as its tools carry it (`registry.Trust`)."""

    def __init__(self, pins: ServerPins, key: str, digest: str, server: str) -> None:
        self.pins, self.key, self.digest, self.server = pins, key, digest, server

    @property
    def note(self) -> str:
        """Why the user is asked: a server not approved before, or one that changed since."""
        if self.pins.get(self.key) is None:
            return f"approving trusts MCP server {self.server!r} until its command or tools change"
        return (
            f"MCP server {self.server!r} changed since you approved it (its command, a tool or "
            "a resource description is different); approving trusts it as it is now"
        )

    def granted(self) -> bool:
        return self.pins.get(self.key) == self.digest

    def grant(self) -> None:
        self.pins.set(self.key, self.digest)
