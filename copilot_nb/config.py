"""Settings every layer reads: the defaults the magics show before anything heavy loads, and where
copilot_nb keeps its settings (one rule, read by the sign-in that stores a token there and by the
workspace policies that protect it from the agent)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_MAX_ROUNDS = 20
"""Most model rounds in one request."""
DEFAULT_TOOL_TIMEOUT = 120.0
DEFAULT_RUN_WAIT = 10.0
"""Seconds run_code and run_cell wait for a run before returning its handle (it goes on)."""
"""Seconds one tool call may run before it is stopped and the model told so."""
COPILOT_CELL_CALL = "__import__('copilot_nb.jupyter.extension').jupyter.extension._run_cell"
"""What a `%%copilot` cell becomes (the magics' input transformer writes it); the kernel's
history tools recognise such cells by it."""


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$COPILOT_NB_CONFIG_DIR`, else `$XDG_CONFIG_HOME/copilot_nb`, else `~/.config/copilot_nb`."""
    return config_dir_candidates(environ)[0]


def config_dir_candidates(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The config dir the environment chooses first, then every other place it could be (a
    setting changed after start-up must not unprotect the folder it used to name)."""
    env = os.environ if environ is None else environ
    home = os.path.expanduser("~")
    candidates = [
        env.get("COPILOT_NB_CONFIG_DIR", ""),
        os.path.join(env["XDG_CONFIG_HOME"], "copilot_nb") if env.get("XDG_CONFIG_HOME") else "",
        os.path.join(home, ".config", "copilot_nb"),
    ]
    return tuple(Path(text).expanduser() for text in candidates if text)


def settings_dirs(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """Every place copilot_nb's settings may live, symlinks resolved, each once."""
    found: list[Path] = []
    for path in config_dir_candidates(environ):
        real = Path(os.path.realpath(path))
        if real not in found:
            found.append(real)
    return tuple(found)


def private_dir(path: Path) -> Path:
    """Make `path` and every missing folder above it owner-only (0700): the user's tokens,
    approvals and conversations must not be readable by the other users of a shared server."""
    missing = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another kernel
            folder.mkdir(mode=0o700)
    return path


def home_relative(path: Path | str) -> str:
    """`~/.config/copilot_nb/mcp.json`: a path as the user would write it (only under home)."""
    home = os.path.expanduser("~").rstrip(os.sep)
    text = str(path)
    if home and text.startswith(home + os.sep):
        return "~" + text[len(home) :]
    return text
