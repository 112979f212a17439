"""The skills block of the system prompt: each offered skill's name and description, no more.

Progressive disclosure, as the specification has it: the model sees what each skill is for
and loads one (`load_skill`) only when a request needs it. The block keeps to `BUDGET`
characters, a description cut at `MAX_DESCRIPTION_SHOWN`; skills past the budget are counted
and named while their names fit, and `load_skill` with a name it does not know lists them all,
so the model can still reach every one. It goes after the
instruction files, at the end of the system prompt: what varies by workspace comes last, so
the prompt's shared prefix stays the same for every folder (prompt caches keep it).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...text import counted, shorten
from .skill_file import Skill

BUDGET = 2_000
"""Characters of the block's list of skills."""
MAX_DESCRIPTION_SHOWN = 300
HEAD = (
    "## Skills\n\n"
    "Skills are instructions (and files) for particular tasks. When a request matches a "
    "skill's description, call load_skill with its name before you start, then follow it. A "
    "skill's scripts run only through run_code, which the user approves seeing all the code."
)


def skills_block(skills: Sequence[Skill]) -> str:
    """The block for these skills (empty when there are none)."""
    if not skills:
        return ""
    lines: list[str] = []
    left = BUDGET
    later: list[str] = []
    for skill in skills:
        line = f"- {skill.name}: {shorten(skill.description, MAX_DESCRIPTION_SHOWN)}"
        if not later and len(line) + 1 <= left:
            lines.append(line)
            left -= len(line) + 1
        else:
            later.append(skill.name)
    if later:
        names = shorten(", ".join(later), max(left, 200))
        lines.append(
            f"({counted(len(later), 'more skill')} not described here, to keep this list short: "
            f"{names}; load_skill with a name loads it, with an unknown one lists them all)"
        )
    return HEAD + "\n\n" + "\n".join(lines) + "\n"
