"""Prompt assembly, as the design has it: the system instructions, the user's instruction files,
the skills' names and descriptions, the global context block, then the request and the history.

The system prompt is ours plus the instruction files (`instructions.py`) and the skills block
(`agent/skills/block.py`), read again at each turn; the context block (`tools/context_block.py`) is built at the start of each turn and goes
before the turn's request. `%copilot context` shows exactly this.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ...kernel_bridge import user_namespace
from ...models.base import Model
from ...tools.context import LiveNotebooks, ToolContext
from ...tools.context_block import context_block
from ...workspace.notebook_file import current_notebook_path
from ...workspace.workspace import Workspace
from ..loop.run_settings import RunSettings
from ..modes.names import TurnMode
from ..skills.block import skills_block
from ..skills.discovery import find_skills
from .families import family_for, listed_family
from .instructions import Instructions, instruction_files, with_instructions
from .system import notebook_prompt


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """What the next request is built from, besides the history."""

    system: str
    files: list[Instructions]
    block: str
    family: str = "generic"
    """The model family whose instructions and tool-search threshold the model gets."""
    mode: TurnMode = "agent"
    skills: str = ""
    """The skills block at the end of `system` (empty: no skill is offered)."""


def system_prompt(
    workspace: Workspace,
    shell: Any = None,
    *,
    mode: TurnMode = "agent",
    model: str = "",
    listed: str = "",
) -> tuple[str, list[Instructions], str]:
    """Our system prompt for this mode and model family, with the instruction files that apply
    to the notebook worked on, then the skills block (also returned alone): last, as what it
    lists varies by workspace and by the packages imported."""
    files = instruction_files(workspace, working_dir=working_dir(workspace, shell))
    family = family_for(model, listed)  # `listed`: the provider's own family for the model
    ours = with_instructions(notebook_prompt(str(workspace.root), mode=mode, family=family), files)
    skills = skills_block(find_skills(workspace).offered)
    return (ours.rstrip("\n") + "\n\n" + skills if skills else ours), files, skills


def working_dir(workspace: Workspace, shell: Any = None) -> str | None:
    """The current notebook's folder, relative to the root, when it is inside it."""
    notebook = current_notebook_path(user_namespace(shell))
    if notebook is None:
        return None
    absolute = notebook if os.path.isabs(notebook) else os.path.join(os.getcwd(), notebook)
    try:
        relative = os.path.relpath(os.path.dirname(os.path.realpath(absolute)), workspace.root)
    except ValueError:  # another drive
        return None
    if relative == "." or relative.startswith(".."):
        return None
    return PurePosixPath(*relative.split(os.sep)).as_posix()


def block_context(
    workspace: Workspace, shell: Any = None, live: LiveNotebooks | None = None
) -> ToolContext:
    """A tool context for the block alone: it reads, and never counts as the model reading."""
    if shell is None:
        return ToolContext(workspace=workspace)
    return ToolContext(
        workspace=workspace,
        current_notebook=lambda: current_notebook_path(shell.user_ns),
        namespace=lambda: shell.user_ns,
        shell=shell,
        live=live,
    )


def prepare(
    workspace: Workspace,
    model: Model,
    shell: Any = None,
    live: LiveNotebooks | None = None,
    mode: TurnMode = "agent",
) -> RunSettings:
    """A run's prompt: the instruction files read now, the block built when the run starts."""
    text, _, _ = system_prompt(
        workspace, shell, mode=mode, model=model.name, listed=listed_family(model)
    )
    ctx = block_context(workspace, shell, live)

    async def build() -> str:
        return await context_block(ctx)

    return RunSettings(system_prompt=text, context_block=build)


async def preview(
    workspace: Workspace,
    shell: Any = None,
    live: LiveNotebooks | None = None,
    *,
    mode: TurnMode = "agent",
    model: str = "",
    listed: str = "",
) -> Prompt:
    """What the next request would carry besides the history (`%copilot context`)."""
    text, files, skills = system_prompt(workspace, shell, mode=mode, model=model, listed=listed)
    return Prompt(
        system=text,
        files=files,
        block=await context_block(block_context(workspace, shell, live)),
        family=family_for(model, listed).name,
        mode=mode,
        skills=skills,
    )
