"""Which files hold secrets, so their contents reach the model only after the user says yes.

A hijacked model (a poisoned README, a web page it was shown) that can read `.env`, a key or a
stored token unseen can put it in its next request. So tools that show a file's contents treat a
read of one of these paths as the approval category `read-secret` (asked by default), and
`search_text` skips them. Their names stay visible: `find_files` and `list_directory` show them.

Rules are globs as `find_files` reads them, matched case-insensitively against the root-relative
path: a glob without '/' matches a name at any depth (`*.pem`), one with a '/' is anchored at the
root unless it starts with `**/`, `**` crosses folders, a trailing '/' covers everything under a
folder of that name, and `!` makes an exception (the last rule that matches decides). The settings folders of copilot_nb itself (`config.settings_dirs`) are
secret wherever the workspace is. A path is checked as written and after resolving symlinks:
`notes.txt` that points at `.env` is a secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..config import settings_dirs
from ..errors import ConfigError
from .globs import GlobError, compile_glob

DEFAULT_SECRETS: tuple[str, ...] = (
    # environment files and credentials of git and the network
    ".env",
    ".env.*",
    ".envrc",
    "**/.git/config",  # a remote URL may carry a token
    ".git-credentials",
    "**/.config/git/credentials",
    ".netrc",
    "_netrc",
    # keys and certificates
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "!id_*.pub",  # a public key is not a secret (except under .ssh, below)
    "**/.ssh/**",
    "**/.gnupg/**",
    # clouds and package managers
    "**/.aws/credentials",
    "**/.aws/config",
    "**/.azure/**",
    "**/.config/gcloud/**",
    "**/.kube/config",
    "**/.docker/config.json",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    "**/.config/gh/hosts.yml",
    "**/github-copilot/hosts.json",
    "**/github-copilot/apps.json",
    "**/.terraform.d/credentials.tfrc.json",
    # the tokens of running Jupyter servers and the keys of their kernels
    "**/jupyter/runtime/**",
    # copilot_nb's own settings and stored tokens, wherever the workspace is
    "**/.config/copilot_nb/**",
)


@dataclass(frozen=True)
class _Rule:
    glob: str
    regex: re.Pattern[str]
    exception: bool


def _compile(glob: str) -> _Rule:
    """One rule as a regex over lower-case paths; a bad glob is a settings mistake: ConfigError."""
    text = glob.strip().lower()
    exception = text.startswith("!")
    body = text[1:] if exception else text
    if body.endswith("/"):  # a folder: everything under it, at any depth unless anchored
        body = body.rstrip("/")
        body = (body if "/" in body else "**/" + body) + "/**"
    if body.startswith("/"):  # anchored at the root, as in a .gitignore
        body = "./" + body.lstrip("/")
    try:
        compiled = compile_glob(body or "**")
    except GlobError as exc:
        raise ConfigError(f"secret path rule {glob!r} is not a valid glob: {exc}") from exc
    return _Rule(glob=glob, regex=compiled.regex, exception=exception)


_ANY_DEPTH = "(?:.*/)?"


@dataclass(frozen=True, kw_only=True)
class SecretRules:
    """The read policy of a `Workspace`: files whose contents ask before the model sees them.

    `SecretRules()` is the default list; `SecretRules.with_globs(["*.secret"])` adds globs,
    `SecretRules(globs=())` removes them all. The settings folders are read from the
    environment when the rules are made; `settings=()` leaves them out.
    """

    globs: tuple[str, ...] = DEFAULT_SECRETS
    settings: tuple[Path, ...] = field(default_factory=settings_dirs)

    def __post_init__(self) -> None:
        self._rules  # noqa: B018  # a bad glob fails when the rules are made, not at a read

    @classmethod
    def with_globs(cls, globs: Iterable[str]) -> SecretRules:
        """The default rules plus extra globs (e.g. from a setting)."""
        return cls(globs=(*DEFAULT_SECRETS, *globs))

    @cached_property
    def _rules(self) -> tuple[_Rule, ...]:
        return tuple(_compile(g) for g in self.globs)

    @cached_property
    def _any(self) -> re.Pattern[str] | None:
        """One regex of every rule, so most paths are ruled out by a single match (a search
        checks one per file): the rules that match at any depth share one `(?:.*/)?`."""
        included = [r.regex.pattern for r in self._rules if not r.exception]
        deep = [p[len(_ANY_DEPTH) :] for p in included if p.startswith(_ANY_DEPTH)]
        anchored = [p for p in included if not p.startswith(_ANY_DEPTH)]
        if deep:
            anchored.append(_ANY_DEPTH + "(?:" + "|".join(deep) + ")")
        if not anchored:
            return None
        return re.compile("|".join(f"(?:{p})" for p in anchored), re.DOTALL)

    def match(self, relative: str) -> str | None:
        """The glob that makes this root-relative posix path (any case) a secret, or None."""
        folded = relative.lower()
        if self._any is None or self._any.fullmatch(folded) is None:
            return None
        found = None
        for rule in self._rules:
            if rule.regex.fullmatch(folded) is not None:
                found = None if rule.exception else rule.glob
        return found

    def inside_settings(self, path: Path) -> Path | None:
        """The settings folder this absolute path lies in (ignoring case), or None."""
        parts = [p.casefold() for p in path.parts]
        for folder in self.settings:
            outer = [p.casefold() for p in folder.parts]
            if parts[: len(outer)] == outer:
                return folder
        return None

    def settings_prefixes(self, root: Path) -> tuple[str, ...]:
        """The settings folders as lower-case root-relative prefixes ('' when the root is inside
        one), for a walk that checks thousands of relative paths."""
        if self.inside_settings(root) is not None:
            return ("",)
        found = []
        for folder in self.settings:
            if root in folder.parents:
                found.append(folder.relative_to(root).as_posix().lower() + "/")
        return tuple(found)

    def for_walk(self, root: Path) -> Callable[[str], bool]:
        """A fast test of the root-relative paths a walk yields (it follows no symlinks)."""
        prefixes = self.settings_prefixes(root)

        whole = self._any

        def is_secret(relative: str) -> bool:
            folded = relative.lower()
            if prefixes and folded.startswith(prefixes):
                return True
            return (
                whole is not None
                and whole.fullmatch(folded) is not None
                and bool(self.match(relative))
            )

        return is_secret

    def why(self, root: Path, lexical: Path, real: Path) -> str | None:
        """Why the file at `real`, reached as `lexical` (both absolute), is a secret, or None."""
        for candidate in dict.fromkeys((lexical, real)):
            folder = self.inside_settings(candidate)
            if folder is not None:
                return f"it is in copilot_nb's settings folder {folder}"
            relative = _relative(root, candidate)
            rule = None if relative is None else self.match(relative)
            if rule is not None:
                via = f" (it leads to {relative})" if candidate is real and real != lexical else ""
                return f"it matches the secret rule {rule!r}{via}"
        return None


def _relative(root: Path, path: Path) -> str | None:
    if root in path.parents:
        return path.relative_to(root).as_posix()
    return None
