"""Which paths an agent may never change, and why: the write policy of a `Workspace`.

Some files are not data but programs that run later, or settings that decide what runs: git hooks,
`.git/config`, `sitecustomize.py`, `*.pth` files, IPython startup files, `.vscode/`, `.envrc`. A
model that writes one of them gets code run outside any approval, so writes there are refused,
also when the file does not exist yet. So are git's and Jupyter's own stores and copilot_nb's own
settings (an agent must not change what it is allowed to do). So are the credential stores of a
home folder (`.ssh/`, `.gnupg/`, `.netrc`, cloud sign-ins): a workspace may be `~` itself.
Files that may be written but run code later are in `later_effects.py`.

Rules are gitignore-style globs (a pattern without a slash matches at any depth, a directory
pattern covers everything under it) matched case-insensitively against the root-relative path,
both as written and after resolving symlinks: `ok.txt` that points at `.git/config` is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import settings_dirs
from ..errors import SandboxError

if TYPE_CHECKING:
    import pathspec


@dataclass(frozen=True, kw_only=True)
class DenyRule:
    """A glob no write may touch, with the reason told to whoever tried."""

    pattern: str
    reason: str

    @cached_property
    def _spec(self) -> pathspec.GitIgnoreSpec:
        import pathspec  # at the first check: its import is a tenth of the agent's

        return pathspec.GitIgnoreSpec.from_lines([self.pattern.lower()])

    def matches(self, relative: str) -> bool:
        """Whether a root-relative posix path (any case) falls under this rule."""
        return relative != "." and self._spec.match_file(relative.lower())


RUNS_LATER = "run later as programs"
CREDENTIAL_STORES: tuple[DenyRule, ...] = (
    DenyRule(
        pattern=".ssh",
        reason="SSH trusts what is kept there (authorized_keys says who may log in, config runs "
        "ProxyCommand and LocalCommand, keys sign you in)",
    ),
    DenyRule(
        pattern=".gnupg",
        reason="GnuPG keeps your keys and the trust in them there (a planted key or gpg.conf "
        "changes what verifies)",
    ),
    DenyRule(pattern=".git-credentials", reason="git signs in with the tokens kept in it"),
    DenyRule(
        pattern="**/.config/git/credentials", reason="git signs in with the tokens kept in it"
    ),
    DenyRule(pattern=".netrc", reason="curl, git and pip sign in with the passwords kept in it"),
    DenyRule(pattern="_netrc", reason="curl, git and pip sign in with the passwords kept in it"),
    DenyRule(
        pattern="**/.config/gh",
        reason="the GitHub CLI keeps its token there, and its aliases run shell commands",
    ),
    DenyRule(
        pattern="**/.config/github-copilot", reason="GitHub Copilot keeps its sign-in token there"
    ),
    DenyRule(pattern="**/github-copilot/hosts.json", reason="GitHub Copilot signs in with it"),
    DenyRule(pattern="**/github-copilot/apps.json", reason="GitHub Copilot signs in with it"),
    DenyRule(
        pattern="**/.aws",
        reason="the AWS tools sign in with the keys kept there, and a profile's "
        "credential_process is a program they run",
    ),
    DenyRule(pattern="**/.azure", reason="the Azure CLI keeps its sign-in tokens there"),
    DenyRule(pattern="**/.config/gcloud", reason="the Google Cloud SDK keeps its tokens there"),
    DenyRule(
        pattern="**/.kube",
        reason="kubectl signs in with the config kept there, and its exec entries run programs",
    ),
    DenyRule(
        pattern="**/.docker/config.json",
        reason="Docker signs in with it, and its credsStore names a program Docker runs",
    ),
    DenyRule(pattern=".pypirc", reason="twine uploads packages with the passwords kept in it"),
    DenyRule(pattern=".pgpass", reason="PostgreSQL clients sign in with the passwords in it"),
    DenyRule(
        pattern="**/.terraform.d/credentials.tfrc.json",
        reason="Terraform signs in with the tokens kept in it",
    ),
    DenyRule(
        pattern="**/jupyter/runtime",
        reason="Jupyter keeps the keys of its running servers and kernels there",
    ),
)
"""Where tools keep the keys and tokens they sign in with (most also name programs to run): no
agent has a reason to write one, and a write could plant an attacker's key or credential helper."""
DEFAULT_DENY: tuple[DenyRule, ...] = (
    DenyRule(pattern="**/.git/hooks", reason=f"files under .git/hooks {RUNS_LATER}"),
    DenyRule(
        pattern="**/.git/config",
        reason="git runs the programs .git/config names (hooksPath, filters, fsmonitor, aliases)",
    ),
    DenyRule(pattern=".git", reason="files under .git are git's own; a wrong write corrupts it"),
    DenyRule(
        pattern=".ipynb_checkpoints",
        reason="Jupyter keeps its checkpoints there (what File > Revert restores)",
    ),
    DenyRule(pattern="sitecustomize.py", reason="Python runs it at every start-up"),
    DenyRule(pattern="usercustomize.py", reason="Python runs it at every start-up"),
    DenyRule(pattern="*.pth", reason="Python runs the import lines of .pth files at start-up"),
    DenyRule(
        pattern="**/profile_*/startup",
        reason="IPython runs the files in a profile's startup folder whenever it starts",
    ),
    DenyRule(
        pattern=".vscode",
        reason="VS Code runs the tasks, launch and interpreter settings kept there",
    ),
    DenyRule(
        pattern=".env", reason="tools load it into the environment later (and it holds secrets)"
    ),
    DenyRule(
        pattern=".env.*", reason="tools load it into the environment later (and it holds secrets)"
    ),
    DenyRule(pattern=".envrc", reason="direnv runs it as a shell script when you enter the folder"),
    DenyRule(
        pattern="/.mcp.json",
        reason="it names the MCP servers copilot_nb (and other agents) start as programs",
    ),
    DenyRule(pattern="**/.hg/hgrc", reason="Mercurial runs the hooks .hg/hgrc names"),
    *CREDENTIAL_STORES,
)
SETTINGS_REASON = "it holds copilot_nb's own settings; an agent must not change what it may do"


@dataclass(frozen=True, kw_only=True)
class WritePolicy:
    """What a workspace refuses to write: deny globs, plus copilot_nb's settings directories.

    `WritePolicy()` is the default list; `WritePolicy(deny=(*DEFAULT_DENY, DenyRule(...)))` adds
    rules, `WritePolicy(deny=())` removes them all. The settings directories are read from the
    environment when the policy is made.
    """

    deny: tuple[DenyRule, ...] = DEFAULT_DENY
    protected_dirs: tuple[Path, ...] = field(default_factory=settings_dirs)

    @classmethod
    def with_globs(
        cls, globs: Iterable[str], reason: str = "the workspace's policy forbids it"
    ) -> WritePolicy:
        """The default policy plus extra deny globs (e.g. from a setting)."""
        extra = tuple(DenyRule(pattern=g, reason=reason) for g in globs)
        return cls(deny=(*DEFAULT_DENY, *extra))

    def check(
        self, root: Path, real: Path, *, lexical: Path | None = None, action: str = "write"
    ) -> None:
        """Raise SandboxError saying why, if writing `real` (reached as `lexical`) is refused."""
        for directory in self.protected_dirs:
            if _inside_folded(real, directory) or (
                lexical is not None and _inside_folded(lexical, directory)
            ):
                raise SandboxError(
                    f"refusing to {action} {_shown(root, lexical or real)}: {SETTINGS_REASON}; "
                    "change it yourself if you mean to"
                )
        seen = [real] if lexical is None or lexical == real else [lexical, real]
        for rule in self.deny:
            for candidate in seen:
                relative = _relative(root, candidate)
                if relative is not None and rule.matches(relative):
                    via = ""
                    if candidate is real and lexical is not None and lexical != real:
                        via = f" (it leads to {relative})"
                    raise SandboxError(
                        f"refusing to {action} {_shown(root, lexical or real)}{via}: "
                        f"{rule.reason}; edit it yourself if you mean to"
                    )


def _relative(root: Path, path: Path) -> str | None:
    if path == root:
        return "."
    if root in path.parents:
        return path.relative_to(root).as_posix()
    return None


def _shown(root: Path, path: Path) -> str:
    relative = _relative(root, path)
    return relative if relative is not None else str(path)


def _inside_folded(path: Path, directory: Path) -> bool:
    """Containment ignoring case, as on the file systems of macOS and Windows."""
    inner = [p.casefold() for p in path.parts]
    outer = [p.casefold() for p in directory.parts]
    return inner[: len(outer)] == outer
