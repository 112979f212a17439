"""Which MCP servers a workspace uses, read from the files users already have.

Three places, later ones winning for a server of the same name: the user's
`<config dir>/mcp.json`, the workspace's `.vscode/mcp.json` (VS Code's `servers`) and the
workspace's `.mcp.json` (`mcpServers`, as Claude Code and Cursor write it). An entry has either
`command` (stdio: `args`, `env`, `cwd`) or `url` (Streamable HTTP: `headers`). Strings may name
environment variables as `${VAR}`, `${VAR:-default}` or `${env:VAR}`, and the workspace as
`${workspaceFolder}`, so a key stays in the environment instead of the file. Our own keys:
`includeTools` / `excludeTools` (the server's tools the model may use), `override` (tool names
that may replace a built-in), `timeout` (milliseconds per call) and `disabled`.

The workspace's two files come with whatever folder the user opened (a cloned repository), so
their entries are read with secret-looking variables (`${GITHUB_TOKEN}`, `${OPENAI_API_KEY}`)
left as written: they are filled in only once the user approved the server (`launch.py`).

Pure: reading and checking text; a broken file or entry becomes a `ConfigProblem`, never an
exception, so one bad entry does not hide the others.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import home_relative, private_dir, settings_dirs
from ...errors import ConfigError
from ...policy import mcp_refusal
from ..redaction.masking import is_secret_name
from .executable import resolved_line

WORKSPACE_FILE = ".mcp.json"
VSCODE_FILE = ".vscode/mcp.json"
USER_FILE = "mcp.json"
EDITOR = "the editor's session"
"""Where servers an editor passed with an ACP session come from: trusted as little as a
workspace's files (asked about before their first launch, secrets held until then)."""
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """One configured server: how to reach it and what of it the model may use."""

    name: str
    source: str
    """The file it came from, as the user knows it (`.mcp.json`, `~/.config/copilot_nb/mcp.json`)."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    override: tuple[str, ...] = ()
    timeout: float | None = None
    """Seconds one call may take; None: the agent's general tool time limit."""
    disabled: bool = False
    entry: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    """The entry as the file wrote it, before any variable was filled in."""
    secrets: tuple[str, ...] = ()
    """The secret-looking variables it names (filled in only if `secrets_filled`)."""
    secrets_filled: bool = True

    @property
    def from_workspace(self) -> bool:
        """It comes from a file of the workspace (which a cloned repository brings along)."""
        return self.source in (WORKSPACE_FILE, VSCODE_FILE, EDITOR)

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def target(self) -> str:
        """What runs or where it is, for a listing: the command line or the URL."""
        return " ".join([self.command, *self.args]) if self.command else self.url

    def allows(self, tool_name: str) -> bool:
        """The per-server filter, on the server's own tool name."""
        if self.include_tools is not None and tool_name not in self.include_tools:
            return False
        return tool_name not in self.exclude_tools

    def identity(self) -> str:
        """A hash of what decides what runs: the command, its arguments and working folder, the
        URL, and the names (not values) of the environment and headers it gets."""
        text = json.dumps(
            [self.command, self.args, self.cwd, self.url, sorted(self.env), sorted(self.headers)]
        )
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class ConfigProblem:
    """An entry or file that could not be used, and why, in words the user can act on."""

    source: str
    name: str
    message: str


@dataclass(frozen=True, kw_only=True)
class McpConfig:
    """Every configured server by name (the winning entry), and what could not be read."""

    servers: Mapping[str, ServerConfig] = field(default_factory=dict)
    problems: tuple[ConfigProblem, ...] = ()


def config_files(root: Path, user_dir: Path) -> list[tuple[Path, str, str]]:
    """(path, how to show it, the key holding servers) in reading order, the last one winning."""
    return [
        (
            user_dir / USER_FILE,
            home_relative(user_dir / USER_FILE),
            "mcpServers",
        ),
        (root / VSCODE_FILE, VSCODE_FILE, "servers"),
        (root / WORKSPACE_FILE, WORKSPACE_FILE, "mcpServers"),
    ]


def load_config(
    root: Path,
    user_dir: Path,
    environ: Mapping[str, str] | None = None,
    given: Mapping[str, Any] | None = None,
) -> McpConfig:
    """Read every config file that exists, then the entries an editor `given` (as `.mcp.json`
    writes them); servers of the same name: the later one wins."""
    env = os.environ if environ is None else environ
    servers: dict[str, ServerConfig] = {}
    problems: list[ConfigProblem] = []
    for path, shown, key in config_files(root, user_dir):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(ConfigProblem(source=shown, name="", message=f"cannot read it: {exc}"))
            continue
        found, trouble = parse_config(
            text,
            source=shown,
            key=key,
            root=root,
            environ=env,
            hold_secrets=shown in (WORKSPACE_FILE, VSCODE_FILE),
        )
        servers.update(found)
        problems.extend(trouble)
    if given:
        found, trouble = parse_config(
            json.dumps({"mcpServers": dict(given)}),
            source=EDITOR,
            key="mcpServers",
            root=root,
            environ=env,
            hold_secrets=True,
        )
        servers.update(found)
        problems.extend(trouble)
    for name, server in list(servers.items()):  # the administrator's policy: never started
        refusal = policy_refusal(server)
        if refusal:
            del servers[name]
            problems.append(ConfigProblem(source=server.source, name=name, message=refusal))
    return McpConfig(servers=servers, problems=tuple(problems))


def policy_refusal(server: ServerConfig) -> str | None:
    """Why the administrator's policy refuses this server, matching the program that will run
    (found on the PATH its `env` gives it) and the names of the variables it sets."""
    if not server.command:
        return mcp_refusal("", server.url)
    resolved = resolved_line(server.command, server.args, server.env, server.cwd)
    return mcp_refusal(server.target, "", resolved=resolved, env=tuple(server.env))


def parse_config(
    text: str,
    *,
    source: str,
    key: str,
    root: Path,
    environ: Mapping[str, str],
    hold_secrets: bool = False,
) -> tuple[dict[str, ServerConfig], list[ConfigProblem]]:
    """The servers of one file's text; each entry that cannot be used is a problem instead."""
    try:
        data = json.loads(strip_jsonc(text)) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return {}, [
            ConfigProblem(
                source=source,
                name="",
                message=f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            )
        ]
    entries = data.get(key, data.get("mcpServers", {})) if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return {}, [ConfigProblem(source=source, name="", message=f'"{key}" is not an object')]
    servers: dict[str, ServerConfig] = {}
    problems: list[ConfigProblem] = []
    for name, entry in entries.items():
        try:
            servers[name] = server_config(
                name, entry, source=source, root=root, environ=environ, hold_secrets=hold_secrets
            )
        except ConfigError as exc:
            problems.append(ConfigProblem(source=source, name=str(name), message=str(exc)))
    return servers, problems


def server_config(  # noqa: C901 - one check per field of a server's entry, in the file's order
    name: str,
    entry: Any,
    *,
    source: str,
    root: Path,
    environ: Mapping[str, str],
    hold_secrets: bool = False,
) -> ServerConfig:
    """One entry, checked; raises ConfigError saying what to change. With `hold_secrets`,
    secret-looking variables stay as written (`${GITHUB_TOKEN}`), set or not."""
    if not isinstance(name, str) or not _NAME.match(name) or "__" in name:
        raise ConfigError(
            f"server name {name!r}: use 1-32 letters, digits, '_' or '-' (no '__': it separates "
            "the server from the tool in tool names)"
        )
    if not isinstance(entry, dict):
        raise ConfigError("the entry is not an object")
    kind = entry.get("type")
    secrets: list[str] = []
    if kind == "sse" or (kind is not None and kind not in ("stdio", "http", "streamable-http")):
        raise ConfigError(
            f'transport "{kind}" is not supported; use "command" (stdio) or a Streamable HTTP "url"'
        )

    def expand(value: Any, what: str) -> str:
        if not isinstance(value, str):
            raise ConfigError(f"{what} must be a string")
        if "${input:" in value:
            raise ConfigError(
                f"{what} uses ${{input:...}}, which only VS Code can fill in; use ${{VAR}} and "
                "set VAR in the kernel's environment"
            )
        text = value.replace("${workspaceFolder}", str(root))

        def variable(match: re.Match[str]) -> str:
            if is_secret_name(match.group(1)):
                secrets.append(match.group(1))
                if hold_secrets:
                    return match.group(0)
            found = environ.get(match.group(1))
            if match.group(2) is not None:  # ${VAR:-default}: the default when unset or empty
                return found or match.group(2)
            if found is None:
                raise ConfigError(f"{what} names ${{{match.group(1)}}}, which is not set")
            return found

        return _VARIABLE.sub(variable, text)

    def strings(value: Any, what: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise ConfigError(f"{what} must be a list of strings")
        return tuple(expand(item, what) for item in value)

    def mapping(value: Any, what: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ConfigError(f"{what} must be an object of strings")
        return {str(k): expand(v, f"{what}.{k}") for k, v in value.items()}

    command = expand(entry.get("command", ""), "command")
    url = expand(entry.get("url", ""), "url")
    if bool(command) == bool(url):
        raise ConfigError('give either "command" (a stdio server) or "url" (Streamable HTTP)')
    if (kind == "stdio" and url) or (kind in ("http", "streamable-http") and command):
        raise ConfigError(f'"type": "{kind}" does not match {"a url" if url else "a command"}')
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError("disabled must be true or false")
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError(f"url {url!r} is not an http(s) URL")
    timeout = entry.get("timeout")
    if timeout is not None and (
        not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0
    ):
        raise ConfigError("timeout must be a positive number of milliseconds")
    include = entry.get("includeTools")
    cwd = entry.get("cwd")
    return ServerConfig(
        name=name,
        source=source,
        command=command,
        args=strings(entry.get("args", []), "args"),
        env=mapping(entry.get("env", {}), "env"),
        cwd=str(root / expand(cwd, "cwd")) if cwd is not None else None,
        url=url,
        headers=mapping(entry.get("headers", {}), "headers"),
        include_tools=None if include is None else strings(include, "includeTools"),
        exclude_tools=strings(entry.get("excludeTools", []), "excludeTools"),
        override=strings(entry.get("override", []), "override"),
        timeout=None if timeout is None else timeout / 1000,
        disabled=disabled,
        entry=dict(entry),
        secrets=tuple(dict.fromkeys(secrets)),
        secrets_filled=not hold_secrets,
    )


def add_server(path: Path, name: str, entry: Mapping[str, Any]) -> None:
    """Write one `mcpServers` entry into a config file (created if missing), keeping the rest."""
    data = _read_for_update(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{path.name}: "mcpServers" is not an object')
    servers[name] = dict(entry)
    _write(path, data)


def remove_server(path: Path, name: str) -> bool:
    """Drop one entry from a config file's `mcpServers`; False if it had none of that name."""
    if not path.exists():
        return False
    data = _read_for_update(path)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or name not in servers:
        return False
    del servers[name]
    _write(path, data)
    return True


def _read_for_update(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(strip_jsonc(text)) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path.name} is not valid JSON (line {exc.lineno}); fix it first"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path.name} does not hold a JSON object; fix it first")
    return data


def _write(path: Path, data: Mapping[str, Any]) -> None:
    """Atomically (a crash mid-write must not leave the user's config half-written), keeping
    the file's permissions: a private file that holds a token stays private."""
    private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:  # new: owner-only in the user's config folder (it may hold tokens)
        private = Path(os.path.realpath(path.parent)) in settings_dirs()
        mode = 0o600 if private else 0o666 & ~_umask()
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def strip_jsonc(text: str) -> str:
    """JSON with comments (`//`, `/* */`) and trailing commas, as VS Code writes its settings, as
    plain JSON; strings are left as they are, and positions of what remains are kept."""
    out: list[str] = []
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char == '"':
            end = at + 1
            while end < size and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[at : end + 1])
            at = end + 1
        elif text.startswith("//", at):
            end = text.find("\n", at)
            end = size if end < 0 else end
            out.append(" " * (end - at))
            at = end
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            end = size if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[at:end]))
            at = end
        elif char == ",":
            rest = re.match(r"(?:\s|//[^\n]*|/\*.*?\*/)*", text[at + 1 :], re.DOTALL)
            following = at + 1 + (rest.end() if rest else 0)
            out.append(" " if following < size and text[following] in "}]" else ",")
            at += 1
        else:
            out.append(char)
            at += 1
    return "".join(out)
