"""`%copilot skills`: every skill found, where it came from, and whether the model is offered it.

Where from: `project` (the workspace's folders: a cloned repository's skills are the project's,
not yours), `user`, `admin` (Jupyter's system folders) or `package NAME VERSION` (a package the
kernel imported). A skill not offered says why: the policy's rule, a `SKILL.md` that breaks the
specification, or another skill of the same name that comes first.
"""

from __future__ import annotations

import argparse
from typing import Any

from ...agent.skills.discovery import PROJECT_FOLDERS, Found, find_skills
from ...text import first_line
from ..safe_html import Rendered, table_html

NONE_FOUND = (
    "copilot: no skills found; add one as .agents/skills/NAME/SKILL.md (front matter: name, "
    "description), or import a package that ships skills"
)


def show_skills(session: Any, args: argparse.Namespace, settings: Any) -> None:
    """List the skills found for the conversation's workspace."""
    from IPython.display import display

    found = find_skills(session.workspace()).found
    if not found:
        print(NONE_FOUND)
        return
    rows = [(f.name, f.source, status(f), f.shown, first_line(f.description, 100)) for f in found]
    head = ("skill", "from", "offered", "folder", "what it is for")
    plain = "\n".join(f"{r[0]:<24} {r[1]:<24} {r[2]}; {r[3]}; {r[4]}" for r in rows)
    note = (
        f"project skills are read from {', '.join(PROJECT_FOLDERS)}; %%copilot --skill NAME "
        "loads one into a request"
    )
    display(Rendered(table_html(head, rows) + f"<p>{note}</p>", f"{plain}\n{note}"))


def status(found: Found) -> str:
    """`yes`, or why the model is not offered the skill."""
    if found.offered:
        return "yes"
    return f"no: {found.refusal or found.problem}"
