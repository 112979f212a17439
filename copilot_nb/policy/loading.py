"""Where the administrator's policy files are, and reading them (again whenever one changes).

The files are `copilot_nb_policy.json` in Jupyter's system config folders and its environment's
(`<sys.prefix>/etc/jupyter`): folders a JupyterHub user cannot write. The system folders are
fixed here (`SYSTEM_FOLDERS`: `/usr/local/etc/jupyter` and `/etc/jupyter`, plus platformdirs'
default site folder, as jupyter_core gives them when no variable is set), because jupyter_core
computes its own `SYSTEM_CONFIG_PATH` from the environment: `JUPYTER_PLATFORM_DIRS=1` with
`XDG_CONFIG_DIRS` naming the user's folder (a kernelspec's `env` can set both) would otherwise
drop `/etc/jupyter` from the search. The folders jupyter_core computes are searched too, but
only in addition: a variable can add places, never remove one. Nothing else the user sets (their
own Jupyter config folder, `%config`, a magic option, `JUPYTER_CONFIG_PATH`) is read here.
`COPILOT_NB_POLICY` may name one more file, which can only add limits: every file found applies,
and a choice must pass each of them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .rules import FILE_NAME, PolicyFormatError, Rules, parse_rules

EXTRA_VARIABLE = "COPILOT_NB_POLICY"
"""An extra policy file (a test's, or a stricter one for one server): it tightens, never loosens."""


def fixed_folders(os_name: str, platform: str, prefix: str) -> tuple[str, ...]:
    """The config folders an administrator writes, as jupyter_core names them with no variable
    set (both with and without `JUPYTER_PLATFORM_DIRS`): no environment can take one away."""
    environment = os.path.join(prefix, "etc", "jupyter")
    if os_name == "nt":  # %PROGRAMDATA% is writable by every user: jupyter_core's opt-in only
        return (environment,)
    site = "/Library/Application Support/jupyter" if platform == "darwin" else "/etc/xdg/jupyter"
    return (environment, "/usr/local/etc/jupyter", "/etc/jupyter", site)


SYSTEM_FOLDERS: tuple[str, ...] = fixed_folders(os.name, sys.platform, sys.prefix)
"""Searched whatever the environment says; jupyter_core's own folders are added after them."""


@dataclass(frozen=True, kw_only=True)
class Policy:
    """Every policy file in force, and the ones that could not be read (which refuse all)."""

    rules: tuple[Rules, ...] = ()
    broken: tuple[tuple[str, str], ...] = ()
    """(file, what is wrong with it) for each file that exists but is not a readable policy."""
    searched: tuple[str, ...] = ()
    """Every place a policy file was looked for, for `%copilot policy`."""

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(r.source for r in self.rules) + tuple(path for path, _ in self.broken)

    def broken_refusal(self, what: str) -> str | None:
        """Fail closed: while a policy file cannot be read, every limited choice is refused."""
        if not self.broken:
            return None
        path, problem = self.broken[0]
        return (
            f"{what} is refused: the administrator's policy {path} cannot be read ({problem}); "
            "copilot_nb refuses what a policy may limit until the file is fixed"
        )


def policy_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The policy files to look for, in order: the fixed system folders, those jupyter_core
    adds from the environment, then the extra file."""
    env = os.environ if environ is None else environ
    return [Path(place) for place in _places(env.get(EXTRA_VARIABLE, ""))]


_places_cache: dict[tuple[object, ...], tuple[str, ...]] = {}


def admin_folders() -> tuple[str, ...]:
    """The config folders an administrator writes: the fixed ones, then jupyter_core's (the
    policy files are there, and the administrator's skills in their `skills/`)."""
    import jupyter_core.paths as jupyter_paths

    folders = (*SYSTEM_FOLDERS, *jupyter_paths.ENV_CONFIG_PATH, *jupyter_paths.SYSTEM_CONFIG_PATH)
    return tuple(dict.fromkeys(folders))


def _places(extra: str) -> tuple[str, ...]:
    """The policy files' paths as text, remembered per search path (a check runs often)."""
    folders = admin_folders()
    key = (folders, extra)
    places = _places_cache.get(key)
    if places is None:
        found = [os.path.join(folder, FILE_NAME) for folder in folders]
        if extra:
            found.append(os.path.expanduser(extra))
        places = _places_cache[key] = tuple(dict.fromkeys(found))
    return places


_cache: tuple[tuple[object, ...], Policy] | None = None


def load_policy(paths: Sequence[Path] | None = None) -> Policy:
    """The policy of these files (by default `policy_paths()`), read again only if one changed:
    one file-status look at each place per check."""
    global _cache
    if paths is None:
        places = _places(os.environ.get(EXTRA_VARIABLE, ""))
    else:
        places = tuple(str(p) for p in paths)
    stamp = tuple(_stamp(place) for place in places)
    if _cache is not None and _cache[0] == (places, stamp):
        return _cache[1]
    found = [Path(place) for place in places]
    rules: list[Rules] = []
    broken: list[tuple[str, str]] = []
    for path in found:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            broken.append((str(path), f"it cannot be read: {exc}"))
            continue
        try:
            rules.append(parse_rules(text, str(path)))
        except PolicyFormatError as exc:
            broken.append((str(path), str(exc)))
    policy = Policy(rules=tuple(rules), broken=tuple(broken), searched=places)
    _cache = ((places, stamp), policy)
    return policy


def _stamp(path: str) -> object:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return repr(exc)
    return (status.st_mtime_ns, status.st_size, status.st_ino)
