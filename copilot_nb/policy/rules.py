"""One policy file's rules, parsed and checked purely: no I/O, so every rule is tested alone.

A key that is absent leaves that choice to the user; a key that is present limits it. Every
check returns the refusal (naming the file and the rule, so the user knows whom to ask) or
None. Patterns are shell-style (`fnmatch`, case-sensitive): `*` matches any run of characters,
`/` included.
"""

from __future__ import annotations

import fnmatch
import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .budgets import Budget

FILE_NAME = "copilot_nb_policy.json"
"""The policy's file name, in each of Jupyter's system and environment config folders."""

STRICTNESS = {"allow": 0, "review": 1, "ask": 2, "deny": 3}
"""Approval values from loosest to strictest. `review` (an edit applied at once, then shown for
review) is looser than `ask`: the change lands before anyone looked at it."""

CATEGORIES = ("read", "read-secret", "edit", "execute", "external")
"""The approval categories a floor may name (the tools' own category names)."""

LOADING_VARIABLES = frozenset(
    {
        *("PATH", "PATHEXT", "COMSPEC", "HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA"),
        *("XDG_CONFIG_HOME", "XDG_DATA_HOME", "BASH_ENV", "ENV"),
        *("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE"),
        *("NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYOPT", "RUBYLIB"),
        *("GEM_HOME", "GEM_PATH", "CLASSPATH", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS"),
        "_JAVA_OPTIONS",
    }
)
"""Variables an MCP entry's `env` may not set under `mcp_commands`: they change which program
runs (`PATH`), what it loads (`LD_PRELOAD`, `PYTHONPATH`, `NODE_OPTIONS`, ...) or where it reads
its settings and fetches its package from (`HOME`'s `.npmrc`, `NPM_CONFIG_REGISTRY`,
`UV_INDEX_URL`), so an allowed command line would run something else."""
LOADING_PREFIXES = ("LD_", "DYLD_", "NPM_CONFIG_", "UV_", "PIP_", "YARN_", "BUN_", "DENO_")


def loading_variables(names: tuple[str, ...]) -> tuple[str, ...]:
    """The names (any case, as Windows and npm read them) that change what an entry runs."""
    return tuple(
        name
        for name in names
        if name.upper() in LOADING_VARIABLES or name.upper().startswith(LOADING_PREFIXES)
    )


LIST_KEYS = (
    *("providers", "models", "base_urls", "mcp_commands", "mcp_urls", "serve_hosts", "skills"),
)
BOOL_KEYS = ("serve", "cassettes", "conversations", "completions", "package_skills")
KEYS = (*LIST_KEYS, "approval_floors", *BOOL_KEYS, "budgets", "ledger", "telemetry")
TELEMETRY_KEYS = ("endpoint", "content")


class PolicyFormatError(ValueError):
    """The file is not a policy we can read: it is refused whole (fail closed)."""


@dataclass(frozen=True, kw_only=True)
class Rules:
    """One file's rules. None: the file says nothing, the user chooses."""

    source: str
    providers: tuple[str, ...] | None = None
    models: tuple[str, ...] | None = None
    base_urls: tuple[str, ...] | None = None
    approval_floors: Mapping[str, str] = field(default_factory=dict)
    mcp_commands: tuple[str, ...] | None = None
    mcp_urls: tuple[str, ...] | None = None
    serve: bool | None = None
    serve_hosts: tuple[str, ...] | None = None
    cassettes: bool | None = None
    conversations: bool | None = None
    completions: bool | None = None
    skills: tuple[str, ...] | None = None
    """Names (shell patterns) of the Agent Skills the model may be offered; the others are not."""
    package_skills: bool | None = None
    """False: the skills that imported packages ship are never offered."""
    budgets: tuple[Budget, ...] | None = None
    """Token caps per user or team and period (`budgets.py`); each applies on its own."""
    ledger: str | None = None
    """The folder the budgets are counted in (`ledger.py`); None: the user's data folder."""
    telemetry: Mapping[str, Any] | None = None
    """`{"endpoint": OTLP/HTTP URL, "content": false}`: traces on, to this collector; `content`
    false keeps message content out whatever the user asks."""

    def _refused(self, rule: str, what: str) -> str:
        return f"{what} is not allowed by the administrator's policy ({self.source}: {rule})"

    def check_model(self, provider: str, model: str, base_url: str | None) -> str | None:
        """Whether data may go to this provider, model (`provider:model`) and endpoint."""
        if self.providers is not None and provider not in self.providers:
            return self._refused(f"providers = {_shown(self.providers)}", f"provider {provider!r}")
        spec = f"{provider}:{model}"
        if self.models is not None and not _matches(spec, self.models):
            return self._refused(f"models = {_shown(self.models)}", f"model {spec!r}")
        if base_url is not None and self.base_urls is not None:
            url = normal_url(base_url)
            if not _matches(url, self.base_urls):
                return self._refused(f"base_urls = {_shown(self.base_urls)}", f"endpoint {url!r}")
        return None

    def floor(self, category: str) -> str | None:
        """The loosest approval this file lets the category have, if it names one."""
        return self.approval_floors.get(category)

    def check_mcp(
        self, command_line: str, url: str, *, resolved: str = "", env: tuple[str, ...] = ()
    ) -> str | None:
        """Whether an MCP server may start (stdio: its command line) or be reached (its URL).
        Once either MCP key is present, a server that matches neither is refused.

        A pattern whose program is a path (`/usr/bin/npx -y *`) is matched against the command
        line as it will run (`resolved`: the program found on the server's own PATH); one that
        names a bare program (`npx -y *`) against the line as written, which runs the program
        the kernel's PATH finds, because an entry whose `env` sets a variable that changes
        what runs or what it loads (`LOADING_VARIABLES`) is refused under `mcp_commands`."""
        if self.mcp_commands is None and self.mcp_urls is None:
            return None
        if command_line:
            allowed = self.mcp_commands or ()
            rule = f"mcp_commands = {_shown(allowed)}"
            what = f"the MCP server command {command_line!r}"
            changed = loading_variables(env)
            if changed:
                return self._refused(
                    rule,
                    f"{what} with {', '.join(changed)} set in its env (which changes what program "
                    "runs or what it loads)",
                )
            if not any(
                fnmatch.fnmatchcase(resolved if _names_path(p) else command_line, p)
                for p in allowed
            ):
                return self._refused(rule, what)
            return None
        allowed = self.mcp_urls or ()
        shown = normal_url(url)
        if not _matches(shown, allowed):
            return self._refused(f"mcp_urls = {_shown(allowed)}", f"the MCP server URL {shown!r}")
        return None

    def check_serve(self, host: str) -> str | None:
        """Whether the OpenAI-compatible proxy may start, listening on `host`."""
        if self.serve is False:
            return self._refused("serve = false", "starting the proxy")
        if self.serve_hosts is not None and not _matches(host, self.serve_hosts):
            rule = f"serve_hosts = {_shown(self.serve_hosts)}"
            return self._refused(rule, f"the proxy listening on {host!r}")
        return None

    def check_write(self, key: str, what: str) -> str | None:
        """Whether `cassettes` or `conversations` may be written."""
        if getattr(self, key) is False:
            return self._refused(f"{key} = false", what)
        return None

    def check_skill(self, name: str, package: str = "") -> str | None:
        """Whether a skill may be offered; `package` names the distribution that ships it."""
        if package and self.package_skills is False:
            return self._refused("package_skills = false", f"skill {name!r} of {package}")
        if self.skills is not None and not _matches(name, self.skills):
            return self._refused(f"skills = {_shown(self.skills)}", f"skill {name!r}")
        return None

    def summary(self) -> list[str]:
        """The rules this file sets, one line each, as the file writes them."""
        lines = []
        for key in KEYS:
            value = getattr(self, key)
            if value is None or (key == "approval_floors" and not value):
                continue
            if key == "budgets":
                value = tuple(budget.describe() for budget in value)
            lines.append(f"{key} = {_shown(value)}")
        return lines


def parse_rules(text: str, source: str) -> Rules:
    """A policy file's text as rules; anything unexpected is a PolicyFormatError naming the key."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PolicyFormatError(f"it is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PolicyFormatError("it must be a JSON object of rules")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise PolicyFormatError(
            f"unknown key{'s' * (len(unknown) != 1)} {', '.join(unknown)}; "
            f"the keys are {', '.join(KEYS)}"
        )
    values: dict[str, Any] = {}
    for key in LIST_KEYS:
        if key in data:
            value = data[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise PolicyFormatError(f"{key} must be a list of strings")
            values[key] = tuple(value)
    for key in BOOL_KEYS:
        if key in data:
            if not isinstance(data[key], bool):
                raise PolicyFormatError(f"{key} must be true or false")
            values[key] = data[key]
    if "approval_floors" in data:
        values["approval_floors"] = _floors(data["approval_floors"])
    values.update(_spending(data, source))
    return Rules(source=source, **values)


def _spending(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The budgets, their ledger and the telemetry a file sets."""
    from .budgets import BudgetFormatError, parse_budgets  # only a file with budgets reads it

    values: dict[str, Any] = {}
    if "budgets" in data:
        try:
            budgets = parse_budgets(data["budgets"])
        except BudgetFormatError as exc:
            raise PolicyFormatError(str(exc)) from None
        values["budgets"] = tuple(replace(b, source=source) for b in budgets)
    if "ledger" in data:
        if not isinstance(data["ledger"], str) or not data["ledger"].strip():
            raise PolicyFormatError("ledger must name a folder")
        values["ledger"] = data["ledger"]
    if "telemetry" in data:
        values["telemetry"] = _telemetry(data["telemetry"])
    return values


def _telemetry(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - set(TELEMETRY_KEYS):
        raise PolicyFormatError(f"telemetry must be an object with {' and '.join(TELEMETRY_KEYS)}")
    if not isinstance(value.get("endpoint", ""), str):
        raise PolicyFormatError("telemetry.endpoint must be the collector's OTLP/HTTP URL")
    if not isinstance(value.get("content", False), bool):
        raise PolicyFormatError("telemetry.content must be true or false")
    return dict(value)


def _floors(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise PolicyFormatError("approval_floors must be an object of category: value")
    floors: dict[str, str] = {}
    for category, floor in value.items():
        name = category.replace("_", "-")
        if name not in CATEGORIES:
            raise PolicyFormatError(
                f"approval_floors names {category!r}; the categories are {', '.join(CATEGORIES)}"
            )
        if floor not in STRICTNESS:
            raise PolicyFormatError(
                f"approval_floors.{category} is {floor!r}; use one of {', '.join(STRICTNESS)}"
            )
        floors[name] = floor
    return floors


def tighten(decision: str, floor: str | None, supported: tuple[str, ...]) -> str:
    """The decision, or the floor where the decision is looser. A floor this surface does not
    support (`review` where there is no review) becomes the next stricter value it does."""
    if floor is None or STRICTNESS.get(decision, 0) >= STRICTNESS[floor]:
        return decision
    for value in STRICTNESS:  # loosest first
        if STRICTNESS[value] >= STRICTNESS[floor] and value in supported:
            return value
    return "deny"


def normal_url(url: str) -> str:
    """`scheme://host[:port]/path`, scheme and host lower-cased, no user, query or trailing
    `/`: what a pattern is matched against, so `https://api.example.com@evil.test` is evil.test."""
    parts = urllib.parse.urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port is not None else host
    return f"{parts.scheme.lower()}://{netloc}{parts.path}".rstrip("/")


def _names_path(pattern: str) -> bool:
    """Whether a command pattern's program is a path (`/usr/bin/npx`, `C:\\tools\\x.exe`)."""
    program = pattern.split(" ", 1)[0]
    return "/" in program or "\\" in program


def _matches(value: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    elif isinstance(value, Mapping):
        value = dict(value)
    return json.dumps(value)
