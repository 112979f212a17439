"""A skill's script never runs unseen: a call that would run one always asks the user first.

A skill may carry scripts (`scripts/clean.py`) its instructions tell the model to run. They are
someone else's code, so whatever the approval settings (`--yes`, `approve_execute = "allow"`, a
trusted source), an execute call asks, showing the code whole, when the code it will run
(run_code's code, run_cell's cell as it stands now, the cells rebuild_names runs) either

- holds a line of a text from a skills folder (`texts.py`: every file of every skills folder
  discovery looks in, what a read tool returned from any skills folder, what `load_skill` handed
  out), however it got there: read and pasted, loaded, written into a cell first; or
- names a skills folder: a path into one (`%run ../.agents/skills/tidy/run.py`), its pieces
  (`os.path.join('.agents', 'skills', ...)`, `Path.home() / '.copilot' / 'skills'`), or a glob
  for one (`glob('**/SKILL.md')`).

It decides on what will run, not on how the call names it. What it cannot see: a script the
model rewrote line by line, or read under a name built in a way no rule here knows; so where
the skills are not your own, keep `execute` at `ask`. (The administrator's floor applies last:
where execute is denied, it is denied.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .texts import TEXTS

ALWAYS = "a skill's code always asks, whatever --yes or approve_execute say"
_SKILL_PATH = re.compile(r"(?:^|[/\\])skills[/\\][A-Za-z0-9]+(?:-[A-Za-z0-9]+)*[/\\]", re.MULTILINE)
"""`.agents/skills/tidy/scripts/a.py`, `~/.copilot/skills/tidy/…`, `…agent-plugin/skills/x/…`."""
_NAMES_FOLDER = re.compile(
    r"""(?ix)
    skill\.md\b                                        # the file every skill has
    | (?<![\w.-])\.(?:agents|claude|copilot)(?![\w-])  # where other agents keep skills
    | \.agent-plugin\b | \bagent_plugins\b             # where packages keep theirs
    | [/\\*]\s*['"]?\s*skills\b | \bskills\s*['"]?\s*[/\\*]   # a path segment: skills/, / 'skills'
    """
)
_PIECE = re.compile(r"""['"]skills['"]""", re.IGNORECASE)
"""`'skills'` alone: a skills folder when the code builds paths, a column name when it does not."""
_BUILDS_PATHS = re.compile(
    r"\b(?:join|joinpath|Path|PurePath|glob|iglob|rglob|listdir|scandir|walk|iterdir|fnmatch)\b"
)
_QUOTED = re.compile(r"^(?P<path>\S+?):\d+: (?P<text>.*)$")
"""A line search_text quotes: `path:12: text`."""


def skill_script_in(arguments: Any, runs: str = "") -> str:
    """Why an execute call runs a skill's code, '' when it does not: its arguments, and `runs`,
    the code it will run where its arguments do not hold it (run_cell's cell)."""
    for text in (*_texts(arguments), runs):
        if not text:
            continue
        if source := TEXTS.found_in(text):
            return f"it runs text from {source}, a skill's file"
        if named := _names_skills_folder(text):
            return f"its code names a skills folder ({named})"
    return ""


def skill_text_source(arguments: Any, runs: str = "") -> str:
    """The skills file whose text a call would run (as `skill_script_in` finds it), or ''."""
    for text in (*_texts(arguments), runs):
        if text and (source := TEXTS.found_in(text)):
            return source
    return ""


def what_runs(source: str) -> str:
    """What an approval says will run, for code holding a skills file's text: the skill's
    script, plainly, never the script's own docstring."""
    if source.rsplit("/", 1)[-1].upper() == "SKILL.MD":
        return f"commands from the skill file {source}"
    return f"the skill's script {source}"


def _names_skills_folder(code: str) -> str:
    """The part of `code` that names a skills folder, or ''."""
    if found := _NAMES_FOLDER.search(code):
        return found.group(0).strip()
    if (found := _PIECE.search(code)) and _BUILDS_PATHS.search(code):
        return found.group(0)
    return ""


def note_result(arguments: Any, content: str) -> None:
    """Keep what a read returned from a skills folder: the file its arguments name (read_file,
    read through any tool), or the lines it quotes from one (search_text's `path:12: text`)."""
    named = next((m.string for t in _texts(arguments) if (m := _SKILL_PATH.search(t))), "")
    if named:
        TEXTS.remember(content, named)
    for line in content.splitlines():
        quoted = _QUOTED.match(line)
        if quoted and _SKILL_PATH.search(quoted["path"]):
            TEXTS.remember(quoted["text"], quoted["path"])


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)
