"""Where a GitHub token is found and kept, and where GitHub lives.

A GitHub token is looked for in this order; the first one found wins:

1. `COPILOT_NB_GITHUB_TOKEN`: an explicit choice for copilot_nb (CI, scripts).
2. Our own sign-in (`%copilot login`, see `github_auth`), kept in `<config dir>/github_token.json`.
3. A Copilot editor sign-in (copilot.vim, copilot.lua, JetBrains, Zed):
   `github-copilot/apps.json` or `hosts.json` under `$XDG_CONFIG_HOME` (default `~/.config`).
4. `GH_TOKEN`, then `GITHUB_TOKEN`: last, because these are usually personal access, `gh` or
   Actions tokens, which GitHub's Copilot token endpoint refuses; a shell-wide export must never
   shadow a real sign-in.

Every host is configurable (`COPILOT_NB_GITHUB_URL`, `COPILOT_NB_GITHUB_API_URL`), so GitHub
Enterprise works and tests run against a loopback fake (`copilot_nb.testing.github_fake`).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...config import config_dir, private_dir

DEFAULT_GITHUB_URL = "https://github.com"
DEFAULT_GITHUB_API_URL = "https://api.github.com"
TOKEN_FILE = "github_token.json"


@dataclass(frozen=True, kw_only=True)
class GitHubHosts:
    """Where GitHub lives: the web host (sign-in) and the REST API (Copilot token exchange)."""

    github_url: str = DEFAULT_GITHUB_URL
    api_url: str = DEFAULT_GITHUB_API_URL

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GitHubHosts:
        """`COPILOT_NB_GITHUB_URL` / `COPILOT_NB_GITHUB_API_URL`, else github.com."""
        env = os.environ if environ is None else environ
        github = (env.get("COPILOT_NB_GITHUB_URL") or DEFAULT_GITHUB_URL).rstrip("/")
        api = env.get("COPILOT_NB_GITHUB_API_URL") or _api_url_for(github)
        return cls(github_url=github, api_url=api.rstrip("/"))

    @property
    def host(self) -> str:
        """The key a token is filed under, as editors do: `github.com`, `acme.ghe.com`."""
        return urlsplit(self.github_url).netloc.lower()


def _api_url_for(github_url: str) -> str:
    host = urlsplit(github_url).netloc.lower()
    if host in ("github.com", "www.github.com"):
        return DEFAULT_GITHUB_API_URL
    if host.endswith(".ghe.com"):
        return f"https://api.{host}"
    return f"{github_url}/api/v3"  # GitHub Enterprise Server


@dataclass(frozen=True, kw_only=True)
class GitHubToken:
    """A GitHub OAuth token and where it came from, so errors can say which one was refused."""

    value: str = field(repr=False)
    source: str
    user: str | None = None


def token_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where `%copilot login` keeps the GitHub token; delete it to sign out."""
    return config_dir(environ) / TOKEN_FILE


def save_github_token(
    token: str,
    *,
    hosts: GitHubHosts | None = None,
    user: str | None = None,
    client_id: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Store the token for this host, readable by the user only (0600), replacing the file atomically."""
    hosts = hosts or GitHubHosts.from_env(environ)
    path = token_path(environ)
    data = _read_json(path)
    entries = data.get("hosts")
    if not isinstance(entries, dict):
        entries = {}
    entries[hosts.host] = {
        "oauth_token": token,
        "user": user,
        "client_id": client_id,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_private(path, json.dumps({"version": 1, "hosts": entries}, indent=2) + "\n")
    return path


def write_private(path: Path, text: str) -> None:
    """Write a secret: a 0600 temp file in the same folder, fsynced, then renamed over the old one."""
    private_dir(path.parent)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            os.chmod(temp, 0o600)
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def stored_token(
    hosts: GitHubHosts | None = None, environ: Mapping[str, str] | None = None
) -> GitHubToken | None:
    """The token `%copilot login` stored for this host, if any."""
    hosts = hosts or GitHubHosts.from_env(environ)
    path = token_path(environ)
    entries = _read_json(path).get("hosts")
    return _entry_token(entries.get(hosts.host) if isinstance(entries, dict) else None, path)


def editor_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where the Copilot editor plugins keep their sign-in (`github-copilot/`)."""
    env = os.environ if environ is None else environ
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / "github-copilot"
    if os.name == "nt" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "github-copilot"
    return Path(os.path.expanduser("~")) / ".config" / "github-copilot"


def editor_token(
    hosts: GitHubHosts | None = None, environ: Mapping[str, str] | None = None
) -> GitHubToken | None:
    """A token from a Copilot editor sign-in: keys are `host` (hosts.json) or `host:app` (apps.json)."""
    hosts = hosts or GitHubHosts.from_env(environ)
    folder = editor_config_dir(environ)
    for name in ("apps.json", "hosts.json"):
        path = folder / name
        for key, entry in _read_json(path).items():
            host = key.lower().partition(":")[0] if name == "apps.json" else key.lower()
            found = _entry_token(entry, path) if host == hosts.host else None
            if found is not None:
                return found
    return None


def _entry_token(entry: Any, path: Path) -> GitHubToken | None:
    """`{"oauth_token": ..., "user": ...}`, the entry shape of every token file we read."""
    if not isinstance(entry, dict) or not entry.get("oauth_token"):
        return None
    user = entry.get("user")
    return GitHubToken(
        value=str(entry["oauth_token"]), source=str(path), user=str(user) if user else None
    )


def find_github_token(
    hosts: GitHubHosts | None = None, environ: Mapping[str, str] | None = None
) -> GitHubToken | None:
    """The GitHub token to use, by the precedence in this module's docstring; None if there is none."""
    env = os.environ if environ is None else environ
    hosts = hosts or GitHubHosts.from_env(env)
    if env.get("COPILOT_NB_GITHUB_TOKEN"):
        return GitHubToken(value=env["COPILOT_NB_GITHUB_TOKEN"], source="COPILOT_NB_GITHUB_TOKEN")
    found = stored_token(hosts, env) or editor_token(hosts, env)
    if found is not None:
        return found
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        if env.get(name):
            return GitHubToken(value=env[name], source=name)
    return None


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from a file; an absent, unreadable or malformed file reads as empty."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
