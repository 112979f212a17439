"""The instruction files users already write, in the system prompt, in a stated order.

Read at each turn (an edit takes effect at the next request), most general first, so the more
specific file has the last word:

1. the user's own `<config dir>/instructions.md`;
2. at the workspace root: `AGENTS.md`, `.github/copilot-instructions.md`, `CLAUDE.md`;
3. `AGENTS.md` in each folder from the root down to the one being worked on (the current
   notebook's), outer first.

Workspace files are read through the `Workspace` (the one door: nothing outside the root, no
symlink out); a file that may hold secrets is never read. Each file is cut at `MAX_FILE_CHARS`
and all of them at `MAX_TOTAL_CHARS`, with a marker saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...config import config_dir, home_relative
from ...errors import SandboxError
from ...text import clip
from ...workspace.workspace import Workspace

ROOT_FILES = ("AGENTS.md", ".github/copilot-instructions.md", "CLAUDE.md")
NESTED_FILE = "AGENTS.md"
USER_FILE = "instructions.md"
MAX_FILE_CHARS = 12_000
MAX_TOTAL_CHARS = 24_000


@dataclass(frozen=True, kw_only=True)
class Instructions:
    """One instruction file as the model gets it."""

    shown: str
    """Where it is, as the user knows it: `AGENTS.md`, `src/AGENTS.md`, `~/.config/…`."""
    text: str
    clipped: bool = False


def instruction_files(
    workspace: Workspace, *, working_dir: str | None = None, user_dir: Path | None = None
) -> list[Instructions]:
    """The instruction files that apply, in order; `working_dir` is relative to the root."""
    found: list[Instructions] = []
    user_file = (user_dir if user_dir is not None else config_dir()) / USER_FILE
    try:
        text = user_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    if text is not None and text.strip():
        found.append(_entry(home_relative(user_file), text))
    for name in ROOT_FILES:
        found.extend(_read(workspace, name))
    folders = PurePosixPath(working_dir or ".").parts
    for depth in range(1, len(folders) + 1):
        found.extend(_read(workspace, "/".join([*folders[:depth], NESTED_FILE])))
    return _within_total(found)


def _read(workspace: Workspace, relative: str) -> list[Instructions]:
    try:
        if not workspace.exists(relative) or workspace.secret(relative):
            return []
        text = workspace.read_text(relative)
    except (OSError, SandboxError, UnicodeDecodeError):
        return []
    return [_entry(relative, text)] if text.strip() else []


def _entry(shown: str, text: str) -> Instructions:
    cut = clip(text.strip(), MAX_FILE_CHARS)
    return Instructions(shown=shown, text=cut, clipped=cut != text.strip())


def _within_total(found: list[Instructions]) -> list[Instructions]:
    """The files in order until the total is spent; the last one that fits in part is cut."""
    kept: list[Instructions] = []
    left = MAX_TOTAL_CHARS
    for item in found:
        if left <= 0:
            break
        if len(item.text) > left:
            item = Instructions(shown=item.shown, text=clip(item.text, left), clipped=True)
        kept.append(item)
        left -= len(item.text)
    return kept


def with_instructions(system_prompt: str, files: list[Instructions]) -> str:
    """The system prompt followed by each file under its own heading."""
    if not files:
        return system_prompt
    parts = [
        system_prompt.rstrip(),
        "",
        "The user's instruction files follow, most general first; where they disagree, the "
        "later one wins. Follow them unless the request says otherwise.",
    ]
    for item in files:
        parts += ["", f"## {item.shown}", "", item.text]
    return "\n".join(parts) + "\n"
