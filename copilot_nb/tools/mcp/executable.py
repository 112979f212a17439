"""Which program an MCP server's command line will actually start, for the policy to match.

The SDK starts a stdio server with its entry's `env` merged over a few of the kernel's variables
(`PATH` among them), and the operating system looks the command up on that merged `PATH`, from
the entry's `cwd`. So the command as written (`npx`) is not what runs when the entry sets its
own `PATH` (a folder of the user's, or of a cloned repository): this module finds the file that
will run, the same way, so an allow-list pattern that names a path is matched against it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence


def search_path(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> str:
    """The `PATH` the server gets: the entry's, else the kernel's (what the SDK passes on)."""
    kernel = os.environ if environ is None else environ
    return env.get("PATH", kernel.get("PATH", os.defpath))


def resolved_executable(
    command: str,
    env: Mapping[str, str],
    cwd: str | None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The absolute path of the program `command` starts, or None when none is found.

    A command with a folder in it is taken from `cwd`; a bare name is looked up on the server's
    `PATH`, a relative entry of which is also taken from `cwd` (as the system does). Links are
    not followed: a pattern names the path an administrator installed (`/usr/bin/npx`)."""
    base = cwd or os.getcwd()
    if os.sep in command or (os.altsep and os.altsep in command):
        path = os.path.abspath(os.path.join(base, command))
        return path if os.access(path, os.X_OK) else None
    folders = [os.path.join(base, folder) for folder in search_path(env, environ).split(os.pathsep)]
    found = shutil.which(command, path=os.pathsep.join(folders))
    return os.path.abspath(found) if found else None


def resolved_line(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The command line as it will run (`/usr/bin/npx -y pkg`), '' when the program is not found."""
    program = resolved_executable(command, env, cwd, environ)
    return " ".join([program, *args]) if program else ""
