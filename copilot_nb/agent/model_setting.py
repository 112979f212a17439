"""The provider and model chosen in JupyterLab's settings (the Settings Editor's "copilot_nb:
model", or the chat panel's model form, which writes the same setting), as a kernel reads them.

JupyterLab keeps a user's settings in its user-settings folder, one file per plugin
(`copilot-nb/model.jupyterlab-settings`); the kernel reads that file itself, when it needs its
default model, rather than waiting for a page to send it: so a kernel knows the choice before
any page attached (the first cell of "Run All", a console, a headless run) and follows a
change made in the Settings Editor at its next turn. A kernel that runs elsewhere (a remote
gateway) sees no file and keeps the other defaults. The key is never here: JupyterLab's files
are not owner-only, so keys live in `models/key_store`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLUGIN = "copilot-nb:model"
SETTINGS_FILE = Path("copilot-nb", "model.jupyterlab-settings")
MAX_FILE = 64 * 1024


@dataclass(frozen=True, kw_only=True)
class ModelSetting:
    """The provider and model JupyterLab's settings name, and where they were read."""

    provider: str = ""
    model: str = ""
    path: Path | None = None
    problem: str = ""
    """Why the file was not used (it cannot be read, parsed, or others can write it), or ""."""

    @property
    def spec(self) -> str:
        """`provider:model`, or "" when either is missing."""
        return f"{self.provider}:{self.model}" if self.provider and self.model else ""


def lab_settings_dir(environ: Mapping[str, str] | None = None) -> Path:
    """JupyterLab's user-settings folder, as JupyterLab finds it: `$JUPYTERLAB_SETTINGS_DIR`,
    else `<Jupyter config dir>/lab/user-settings`."""
    env = os.environ if environ is None else environ
    if env.get("JUPYTERLAB_SETTINGS_DIR"):
        return Path(env["JUPYTERLAB_SETTINGS_DIR"]).expanduser()
    if env.get("JUPYTER_CONFIG_DIR"):
        return Path(env["JUPYTER_CONFIG_DIR"]).expanduser() / "lab" / "user-settings"
    try:
        from jupyter_core.paths import jupyter_config_dir
    except ImportError:  # no Jupyter here (a script): its default place
        return Path(os.path.expanduser("~")) / ".jupyter" / "lab" / "user-settings"
    return Path(jupyter_config_dir()) / "lab" / "user-settings"


def model_setting(environ: Mapping[str, str] | None = None) -> ModelSetting:
    """The provider and model saved in JupyterLab's settings; empty when none are (or the file
    is not usable: `problem` says why)."""
    path = lab_settings_dir(environ) / SETTINGS_FILE
    try:
        found = path.stat()
    except OSError:
        return ModelSetting(path=path)
    why = _not_trusted(found)
    if why:
        return ModelSetting(path=path, problem=f"{path} {why}, so copilot_nb does not use it.")
    try:
        data = json_with_comments(path.read_text(encoding="utf-8")[:MAX_FILE])
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return ModelSetting(path=path, problem=f"{path} could not be read: {exc}")
    if not isinstance(data, dict):
        return ModelSetting(path=path, problem=f"{path} does not hold an object of settings.")
    provider, model = _text(data.get("provider")), _text(data.get("model"))
    return ModelSetting(provider=provider.lower(), model=model, path=path)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _not_trusted(found: os.stat_result) -> str:
    """Why a settings file may not choose the model: others can write it, or it is not the
    user's own regular file. (JupyterLab writes it readable by all: that is fine, it holds no
    secret.)"""
    if not stat.S_ISREG(found.st_mode):
        return "is not a regular file"
    if os.name == "nt":
        return ""
    if found.st_uid != os.geteuid():
        return f"belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o022:
        return f"can be written by other users (mode {stat.S_IMODE(found.st_mode):04o})"
    return ""


def json_with_comments(text: str) -> Any:
    """What JupyterLab writes in a settings file: JSON with `//` and `/* */` comments (the
    Settings Editor annotates each value) and perhaps a trailing comma."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
        elif text.startswith("//", i):
            line_end = text.find("\n", i)
            i = n if line_end < 0 else line_end
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                raise ValueError("a /* comment is not closed")
            i = close + 2
        else:
            out.append(c)
            i += 1
    return json.loads(_no_trailing_commas("".join(out)))


def _string_end(text: str, start: int) -> int:
    """The index after the JSON string that starts at `start` (its escapes skipped)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return len(text)


def _no_trailing_commas(text: str) -> str:
    """`{"a": 1,}` as `{"a": 1}`, outside strings."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
            continue
        if c in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
        out.append(c)
        i += 1
    return "".join(out)


__all__ = [
    "PLUGIN",
    "SETTINGS_FILE",
    "ModelSetting",
    "json_with_comments",
    "lab_settings_dir",
    "model_setting",
]
