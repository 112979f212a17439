"""`%copilot skills`: every skill found, where it came from, and whether the model is offered it.

Where from: `project` (the folders from the notebook's up to the repository's root: a cloned
repository's skills are the project's, not yours), `user`, `admin` (Jupyter's system folders)
or `package NAME VERSION` (a package the kernel imported). A skill not offered says why: the
policy's rule, a `SKILL.md` that breaks the specification, or another skill of the same name
that comes first. Every listing says where the project's skills were looked for, and an empty
one says every folder looked in, so a skill put elsewhere is found by reading it.
"""

from __future__ import annotations

import argparse
from typing import Any

from ...agent.skills.discovery import PROJECT_FOLDERS, Catalogue, Found, find_skills
from ...agent.skills.project import ProjectFolders
from ...config import home_relative
from ...text import first_line
from ..safe_html import Rendered, table_html

ADD_ONE = "add one as .agents/skills/NAME/SKILL.md (front matter: name, description)"


def show_skills(session: Any, args: argparse.Namespace, settings: Any) -> None:
    """List the skills found for the conversation's workspace."""
    from IPython.display import display

    catalogue = find_skills(session.workspace())
    if not catalogue.found:
        print(none_found(catalogue))
        return
    found = catalogue.found
    rows = [(f.name, f.source, status(f), f.shown, first_line(f.description, 100)) for f in found]
    head = ("skill", "from", "offered", "folder", "what it is for")
    plain = "\n".join(f"{r[0]:<24} {r[1]:<24} {r[2]}; {r[3]}; {r[4]}" for r in rows)
    note = f"project skills: {project_places(catalogue)}; %%copilot --skill NAME loads one"
    display(Rendered(table_html(head, rows) + f"<p>{note}</p>", f"{plain}\n{note}"))


def none_found(catalogue: Catalogue) -> str:
    """No skill anywhere: every folder looked in, and how to add one where it will be found."""
    where = [f"the project's {project_places(catalogue)}"]
    if catalogue.elsewhere:
        where.append(", ".join(catalogue.elsewhere))
    where.append("the packages the kernel imported")
    project = catalogue.project
    into = f" in {home_relative(project.top)}" if project is not None else ""
    return (
        f"copilot: no skills found; looked in {'; in '.join(where)}. To use one, {ADD_ONE}{into}, "
        "or import a package that ships skills"
    )


def project_places(catalogue: Catalogue) -> str:
    """`.github/skills, … and .jupyter/skills in ~/proj/notebooks and ~/proj (the repository's
    root)`: the project's skills folders, and the folders they were looked for in."""
    bases = f"{', '.join(PROJECT_FOLDERS[:-1])} and {PROJECT_FOLDERS[-1]}"
    project = catalogue.project
    if project is None:
        return bases
    return f"{bases} in {_folders(project)}"


def _folders(project: ProjectFolders) -> str:
    shown = [home_relative(folder) for folder in project.folders]
    listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
    if project.repository is None:
        return f"{listed} (not in a git repository, so no folder above it)"
    return f"{listed} (the git repository's root)"


def status(found: Found) -> str:
    """`yes`, or why the model is not offered the skill."""
    if found.offered:
        return "yes"
    return f"no: {found.refusal or found.problem}"
