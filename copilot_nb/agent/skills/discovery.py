"""Where skills are found, and which of them the model is offered.

Looked for where the other agents look, in this order (the first skill of a name wins, and
`%copilot skills` says which one a later one gives way to):

1. the administrator's: `skills/` in Jupyter's system config folders (where the policy is);
2. the project's: `.github/skills`, `.claude/skills`, `.agents/skills`, `.copilot/skills`,
   `.jupyter/skills` in each folder from the notebook's up to the repository's root, nearest
   first (`project.py`; a cloned repository's skills are the project's, and say so);
3. the user's: `~/.copilot/skills`, `~/.agents/skills`, `~/.claude/skills`, and `skills/` in
   the user's Jupyter config folder;
4. the packages the kernel has imported (`packages.py`).

A skill is a folder holding a `SKILL.md`. Every folder is read through a `Workspace` (the one
door): the project's through the project's (those above the workspace root through one rooted
at the repository's root), the others through one rooted at their skills folder, so a link out
of it is not followed. The administrator's policy may allow only some
skills (`skills`) and switch package skills off (`package_skills`). Read again at each use:
an edit takes effect at the next request. Every skills folder looked in is handed to
`texts.py`, so the approval knows its scripts by their text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from ...config import home_relative
from ...errors import ConfigError, SandboxError
from ...policy import skill_refusal
from ...policy.loading import admin_folders
from ...workspace.notebook_file import current_notebook_path
from ...workspace.workspace import Workspace
from .packages import imported_package_skills
from .project import ProjectFolders, project_folders
from .skill_file import FILE_NAME, Origin, Skill, SkillProblem, parse_skill
from .texts import TEXTS

PROJECT_FOLDERS = (
    ".github/skills",
    ".claude/skills",
    ".agents/skills",
    ".copilot/skills",
    ".jupyter/skills",
)
USER_FOLDERS = ("~/.copilot/skills", "~/.agents/skills", "~/.claude/skills")


@dataclass(frozen=True, kw_only=True)
class Found:
    """A folder that holds a `SKILL.md`, and whether the model is offered it (else why not)."""

    name: str
    shown: str
    source: str
    description: str = ""
    skill: Skill | None = None
    problem: str = ""
    """Not a skill we offer: the file breaks the specification, or another skill has its name."""
    refusal: str = ""
    """The administrator's policy does not allow it."""

    @property
    def offered(self) -> bool:
        return self.skill is not None and not self.problem and not self.refusal


@dataclass(frozen=True, kw_only=True)
class Catalogue:
    """Every skill found, in lookup order."""

    found: tuple[Found, ...] = ()
    project: ProjectFolders | None = None
    """The folders whose skills folders were looked in as the project's."""
    elsewhere: tuple[str, ...] = ()
    """The administrator's and the user's skills folders looked in, as shown."""

    @property
    def offered(self) -> tuple[Skill, ...]:
        return tuple(f.skill for f in self.found if f.offered and f.skill is not None)

    def get(self, name: str) -> Found | None:
        """The entry a name means: the offered skill of that name, else the first found."""
        named = [f for f in self.found if f.name == name]
        return next((f for f in named if f.offered), named[0] if named else None)


@dataclass(frozen=True, kw_only=True)
class Places:
    """Where to look (a test names its own folders)."""

    admin: Sequence[Path] = field(default_factory=list)
    project: Sequence[str] = PROJECT_FOLDERS
    notebook: Path | None = None
    """The notebook's folder, where the project's skills are looked for first."""
    user: Sequence[Path] = field(default_factory=list)
    packages: bool = True


def default_places() -> Places:
    """The folders of this machine and user, as the module docstring lists them."""
    import jupyter_core.paths as jupyter_paths

    user = [Path(os.path.expanduser(folder)) for folder in USER_FOLDERS]
    user.append(Path(jupyter_paths.jupyter_config_dir()) / "skills")
    admin = [Path(folder) / "skills" for folder in admin_folders()]
    return Places(admin=admin, notebook=_notebook_folder(), user=user)


def _notebook_folder() -> Path | None:
    """The folder of the notebook a Jupyter server started this kernel for (its absolute path
    is in the kernel's environment), None elsewhere."""
    notebook = current_notebook_path({})
    return Path(notebook).parent if notebook and os.path.isabs(notebook) else None


def find_skills(workspace: Workspace, places: Places | None = None) -> Catalogue:
    """Every skill in `places` (by default this machine's), checked, in lookup order."""
    places = places or default_places()
    found: list[Found] = []
    for folder in places.admin:
        found += _outside(folder, "admin")
    project = project_folders(workspace.root, notebook_folder=places.notebook)
    found += _project(workspace, project, places.project)
    for folder in places.user:
        found += _outside(folder, "user")
    if places.packages:
        for package in imported_package_skills(workspace=project.top):
            entries = _outside(
                package.folder, "package", package=package.distribution, version=package.version
            )
            found += [replace(f, problem=f.problem or package.problem) for f in entries]
    elsewhere = tuple(home_relative(folder) for folder in [*places.admin, *places.user])
    return Catalogue(
        found=tuple(_allowed(_first_of_each_name(found))), project=project, elsewhere=elsewhere
    )


def _project(workspace: Workspace, project: ProjectFolders, bases: Sequence[str]) -> list[Found]:
    """The skills of each project folder, nearest first: through the workspace inside it, above
    it through a Workspace rooted at the repository's root (a link out of that is not followed)."""
    above: Workspace | None = None
    found: list[Found] = []
    for folder in project.folders:
        inside = folder.is_relative_to(workspace.root)
        door = workspace
        if not inside:
            above = above or Workspace(project.top, read_only=True)
            door = above
        for base in bases:
            relative = _posix(os.path.relpath(folder / base, door.root))
            shown = _posix(os.path.relpath(folder / base, workspace.root))
            _watch_project(door, relative, shown)
            found += _scan(door, relative, origin="project", shown=shown, project=inside)
    return found


def _posix(path: str) -> str:
    return PurePath(path).as_posix()


def _outside(folder: Path, origin: Origin, **package: str) -> list[Found]:
    """The skills in a folder outside the workspace, read through a Workspace rooted there."""
    shown = home_relative(folder)
    TEXTS.watch(folder, shown)
    if not folder.is_dir():
        return []
    try:
        door = Workspace(folder, read_only=True)
    except ConfigError:
        return []
    return _scan(door, ".", origin=origin, shown=shown, project=False, **package)


def _watch_project(door: Workspace, base: str, shown: str) -> None:
    """Have the approval know the files of a project skills folder, made yet or not."""
    # a folder the door refuses (a link out of it) offers no skill, and no tool reads it
    with suppress(OSError, SandboxError):
        TEXTS.watch(door.resolve(base), shown)


def _scan(
    door: Workspace, base: str, *, origin: Origin, shown: str, project: bool, **package: str
) -> list[Found]:
    """Each sub-folder of `base` with a `SKILL.md`, as a skill or as the reason it is not one."""
    try:
        entries = door.list_dir(base) if door.exists(base) else []
    except (OSError, SandboxError):
        return []
    source = f"package {package['package']} {package['version']}" if package else origin
    found = []
    for entry in entries:
        place = f"{shown}/{entry.name}"
        relative = entry.name if base == "." else f"{base}/{entry.name}"
        if entry.outside:
            problem = "a link out of its skills folder, which is not followed"
            found.append(Found(name=entry.name, shown=place, source=source, problem=problem))
            continue
        if not entry.is_dir or entry.name.startswith("."):
            continue
        try:
            if not door.exists(f"{relative}/{FILE_NAME}"):
                continue
            text = door.read_text(f"{relative}/{FILE_NAME}")
            name, description, body = parse_skill(text, folder=entry.name)
        except (OSError, SandboxError, UnicodeDecodeError, SkillProblem) as exc:
            found.append(Found(name=entry.name, shown=place, source=source, problem=str(exc)))
            continue
        skill = Skill(
            name=name,
            description=description,
            body=body,
            origin=origin,
            folder=door.resolve(relative),
            shown=place,
            in_project=relative if project else None,
            **package,
        )
        found.append(
            Found(name=name, shown=place, source=source, description=description, skill=skill)
        )
    return found


def _first_of_each_name(found: list[Found]) -> list[Found]:
    """A later skill of a name already found gives way; the same folder seen twice (a home
    folder as the workspace) is listed once."""
    kept: list[Found] = []
    first: dict[str, Found] = {}
    folders: set[Path] = set()
    for entry in found:
        if entry.skill is not None:
            if entry.skill.folder in folders:
                continue
            folders.add(entry.skill.folder)
        earlier = first.get(entry.name)
        if earlier is not None and entry.skill is not None and not entry.problem:
            entry = replace(
                entry, problem=f"the {earlier.source} skill {earlier.shown} has its name"
            )
        elif entry.skill is not None and not entry.problem:
            first[entry.name] = entry
        kept.append(entry)
    return kept


def _allowed(found: list[Found]) -> list[Found]:
    """The administrator's policy over each skill that would be offered."""
    allowed = []
    for entry in found:
        if entry.skill is not None and not entry.problem:
            refusal = skill_refusal(entry.name, entry.skill.package) or ""
            entry = replace(entry, refusal=refusal)
        allowed.append(entry)
    return allowed
