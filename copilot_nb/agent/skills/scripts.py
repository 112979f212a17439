"""A skill's script never runs unseen: a call that runs one always asks the user first.

A skill may carry scripts (`scripts/clean.py`) its instructions tell the model to run. They are
someone else's code, so whatever the approval settings (`--yes`, `approve_execute = "allow"`),
an execute call that names a file in a skills folder, or whose code holds the text of a script
`load_skill` handed the model, asks, showing the code whole. (The administrator's floor still
applies: where execute is denied, it is denied.)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

_SKILL_PATH = re.compile(r"(?:^|[/\\])skills[/\\][a-z0-9]+(?:-[a-z0-9]+)*[/\\]", re.MULTILINE)
"""`.agents/skills/tidy/scripts/a.py`, `~/.copilot/skills/tidy/…`, `…agent-plugin/skills/x/…`."""
MIN_SCRIPT_CHARS = 40
"""A script shorter than this is too common a text to recognise (`print(1)`)."""


class _Served:
    """The scripts `load_skill` has handed the model in this kernel, as normalised text."""

    def __init__(self) -> None:
        self._texts: set[str] = set()
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        normal = _normal(text)
        if len(normal) >= MIN_SCRIPT_CHARS:
            with self._lock:
                self._texts.add(normal)

    def within(self, text: str) -> bool:
        normal = _normal(text)
        with self._lock:
            return any(script in normal for script in self._texts)


SERVED = _Served()


def runs_skill_script(arguments: Any) -> bool:
    """Whether an execute call's arguments name a skill's file or hold a served script."""
    return any(_SKILL_PATH.search(text) or SERVED.within(text) for text in _texts(arguments))


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)


def _normal(text: str) -> str:
    """Lines stripped, blank ones dropped: indentation and line endings do not hide a script."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())
