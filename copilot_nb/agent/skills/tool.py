"""`load_skill`: a skill's instructions and the list of its files, when the model asks.

The system prompt names the skills (`block.py`); this tool hands over one skill's body, read
again now (an edit takes effect at once, the policy is checked again), and the files beside it.
With `file`, one of those files, read through a `Workspace` rooted at the skill's folder (the
one door: nothing outside it, no link out, a secret never). Offered only while there is a skill
to load, so a workspace without skills sends the tool list it always did.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SandboxError, ToolError
from ...text import clip
from ...tools.registry import Tool, ToolOutput, bound_tool
from ...workspace.workspace import Workspace
from .discovery import Catalogue, Places, find_skills
from .skill_file import FILE_NAME, Skill
from .texts import TEXTS

MAX_FILES_LISTED = 100
MAX_FILE_CHARS = 100_000
TOOL_NAME = "load_skill"


@dataclass(frozen=True, kw_only=True)
class SkillContext:
    """What `load_skill` looks in: the workspace, and where skills are (None: this machine's)."""

    workspace: Workspace
    places: Places | None = None

    def catalogue(self) -> Catalogue:
        return find_skills(self.workspace, self.places)


def skill_tools(workspace: Workspace, places: Places | None = None) -> list[Tool]:
    """`load_skill`, when at least one skill may be offered; else nothing."""
    context = SkillContext(workspace=workspace, places=places)
    if not context.catalogue().offered:
        return []
    return [bound_tool(load_skill, context)]


def load_skill(ctx: SkillContext, name: str, file: str | None = None) -> ToolOutput:
    """Load a skill named in the system prompt's Skills list: its instructions and the list of
    its files. Load one before a task its description matches, then follow it.

    Args:
        name: The skill's name, as the Skills list gives it.
        file: A file of the skill to read (a path inside its folder, as the list of its files
            gives it); leave it out to load the instructions.
    """
    skill = offered_skill(ctx.catalogue(), name)
    if file is None:
        return skill_output(skill)
    door = Workspace(skill.folder, read_only=True)
    try:
        if door.secret(file):
            raise ToolError(f"load_skill: {file!r} in skill {name!r} may hold secrets; not read")
        text = door.read_text(file)
    except SandboxError as exc:
        raise ToolError(f"load_skill: {exc}") from None
    except (OSError, UnicodeDecodeError):
        listed = ", ".join(skill_files(skill)[:20]) or "none"
        raise ToolError(
            f"load_skill: skill {name!r} has no text file {file!r}; its files: {listed}"
        ) from None
    TEXTS.remember(text, f"{skill.shown}/{file}")
    return ToolOutput(content=clip(text, MAX_FILE_CHARS), summary=f"skill {name}: {file}")


def offered_skill(catalogue: Catalogue, name: str) -> Skill:
    """The skill a name means, or a ToolError that says why not and what there is."""
    found = catalogue.get(name)
    if found is not None and found.offered and found.skill is not None:
        return found.skill
    names = ", ".join(s.name for s in catalogue.offered) or "none"
    if found is None:
        raise ToolError(f"load_skill: there is no skill {name!r}; the skills are: {names}")
    why = found.refusal or found.problem
    raise ToolError(f"load_skill: skill {name!r} is not offered: {why}; the skills are: {names}")


def skill_output(skill: Skill) -> ToolOutput:
    """The body and the files of a skill, as the model reads them once loaded."""
    files = skill_files(skill)
    parts = [
        f'<skill name="{skill.name}" from="{skill.source}: {skill.shown}">',
        skill.body,
        "</skill>",
    ]
    if files:
        where = f'load_skill(name="{skill.name}", file=PATH)'
        if skill.in_project is not None:
            where += f" or read_file on {skill.in_project}/PATH"
        parts += ["", f"Files of this skill (read one with {where}):"]
        parts += [f"- {path}" for path in files[:MAX_FILES_LISTED]]
        if len(files) > MAX_FILES_LISTED:
            parts.append(f"- … and {len(files) - MAX_FILES_LISTED} more")
        parts.append(
            "To run one of its scripts, pass the script's whole text to run_code: the user is "
            "asked first and sees all of it."
        )
    return ToolOutput(content="\n".join(parts), summary=f"skill {skill.name} loaded")


def skill_files(skill: Skill) -> list[str]:
    """The files in a skill's folder besides its `SKILL.md`, as paths inside it."""
    door = Workspace(skill.folder, read_only=True)
    files: list[str] = []
    folders = ["."]
    while folders and len(files) <= MAX_FILES_LISTED:
        try:
            entries = door.list_dir(folders.pop(0))
        except (OSError, SandboxError):
            continue
        for entry in entries:
            if entry.outside or entry.name.startswith("."):
                continue
            if entry.is_dir:
                folders.append(entry.path)
            elif entry.path != FILE_NAME:
                files.append(entry.path)
    return sorted(files)
