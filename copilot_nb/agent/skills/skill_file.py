"""One skill's `SKILL.md`: YAML front matter (name, description, ...) then the instructions.

Checked as the agentskills.io specification and its `skills-ref` validator check it: the name
is 1-64 lowercase letters, digits and single hyphens (none first or last) and is its folder's
name; the description is 1-1,024 characters; `compatibility` at most 500; no fields beyond the
specification's. A skill that fails is never offered, and `%copilot skills` says why. Pure: the
caller reads the file (through a `Workspace`), so every rule is tested on text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...text import shorten

FILE_NAME = "SKILL.md"
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
MAX_NESTING = 32
"""Levels of lists and mappings in the front matter: its fields are flat, `metadata` a map."""
MAX_PROBLEM_CHARS = 200
"""A problem is one line of `%copilot skills`."""
FIELDS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
"""The front matter's fields in the specification; `skills-ref` refuses any other."""
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_BRACKETS = re.compile(r"[\[\]{}]")

Origin = Literal["admin", "project", "user", "package"]
"""Where a skill comes from, in the order a name is looked up (the first of a name wins)."""


class SkillProblem(ValueError):
    """Why a `SKILL.md` is not a skill we offer, in words for `%copilot skills`."""


@dataclass(frozen=True, kw_only=True)
class Skill:
    """A checked skill and where it lives."""

    name: str
    description: str
    body: str
    origin: Origin
    folder: Path
    """The skill's folder, symlinks resolved: files are read through a Workspace rooted here."""
    shown: str
    """The folder as the user knows it: `.agents/skills/tidy`, `~/.copilot/skills/tidy`."""
    in_project: str | None = None
    """The folder relative to the workspace root, for a project skill (read_file reads there)."""
    package: str = ""
    """The distribution that ships it, for a package's skill."""
    version: str = ""

    @property
    def source(self) -> str:
        """`project`, `user`, `admin` or `package pandas 2.2.3`: where it came from, in a word."""
        if self.origin == "package":
            return f"package {self.package} {self.version}"
        return self.origin


def split_front_matter(text: str) -> tuple[Mapping[str, Any], str]:
    """The front matter as a mapping and the body after it; SkillProblem if there is none."""
    import yaml  # late: only a workspace with skills pays for it

    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillProblem(f"{FILE_NAME} must start with '---' and YAML front matter")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise SkillProblem(f"{FILE_NAME}'s front matter is not closed by a '---' line")
    data = _load(yaml, "".join(lines[1:end]))
    if not isinstance(data, dict):
        raise SkillProblem(f"{FILE_NAME}'s front matter must be a YAML mapping of fields")
    return data, "".join(lines[end + 1 :]).strip()


def _load(yaml: Any, front: str) -> Any:
    """The front matter's YAML, or SkillProblem in one line: a document nested deeper than
    `MAX_NESTING` is refused before it is built (building it recurses once per level), and a
    value YAML cannot make (`2001-02-30`) is a problem of the file, not an error of ours."""
    too_deep = SkillProblem(
        f"{FILE_NAME}'s front matter nests deeper than {MAX_NESTING} levels; keep its fields flat"
    )
    if _bracket_depth(front) > MAX_NESTING:  # YAML's scanner takes quadratic time over these
        raise too_deep
    try:
        depth = 0
        for event in yaml.parse(front, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    raise too_deep
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.safe_load(front)
    except SkillProblem:
        raise
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        why = shorten(" ".join(str(exc).split()), MAX_PROBLEM_CHARS - 50)
        raise SkillProblem(f"{FILE_NAME}'s front matter is not valid YAML ({why})") from None


def _bracket_depth(text: str) -> int:
    """The deepest run of open `[` and `{` (quoted ones too: never less than YAML's nesting)."""
    depth = deepest = 0
    for char in _BRACKETS.findall(text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def check_name(name: object, folder: str) -> str:
    """The skill's name, if it is one the specification allows and it names its folder."""
    if not isinstance(name, str) or not name.strip():
        raise SkillProblem("the front matter needs a 'name'")
    name = unicodedata.normalize("NFKC", name.strip())
    if len(name) > MAX_NAME_CHARS:
        raise SkillProblem(f"name {name[:20]!r}… is over {MAX_NAME_CHARS} characters")
    if not _NAME.match(name):
        raise SkillProblem(
            f"name {name!r} must be lowercase letters, digits and single hyphens, "
            "not starting or ending with a hyphen"
        )
    if name != unicodedata.normalize("NFKC", folder):
        raise SkillProblem(f"name {name!r} must match its folder's name {folder!r}")
    return name


def parse_skill(text: str, *, folder: str) -> tuple[str, str, str]:
    """(name, description, body) of a `SKILL.md` in a folder named `folder`, or SkillProblem."""
    data, body = split_front_matter(text)
    unknown = sorted(str(key) for key in data if key not in FIELDS)
    if unknown:
        raise SkillProblem(
            f"unexpected field{'s' * (len(unknown) != 1)} {', '.join(unknown)}; the "
            "specification allows "
            f"{', '.join(sorted(FIELDS))}"
        )
    name = check_name(data.get("name"), folder)
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillProblem("the front matter needs a 'description' saying when to use the skill")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillProblem(
            f"the description is {len(description):,} characters (at most "
            f"{MAX_DESCRIPTION_CHARS:,}); move detail into the body"
        )
    compatibility = data.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY_CHARS
    ):
        raise SkillProblem(f"compatibility must be text of at most {MAX_COMPATIBILITY_CHARS}")
    return name, " ".join(description.split()), body
