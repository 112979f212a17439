"""The kernel's state as the agent knows it: which kernel this is, the names the conversation
used, the agent's own code that made some of them, and what a restart lost.

A restart is detected, not guessed: every kernel process gets an instance id of its own
(`INSTANCE`), each saved turn records the id of the kernel it ran in and the names the
conversation used so far, and a resumed conversation whose last turn ran in another kernel ran
before a restart. The names it used that the fresh kernel lacks are what the restart lost; the
next turn's context block says so, with the cells that make them (`rebuild.py`).

A name is the conversation's when it held the user's work (not a module or an imported function:
an import brings those back) and the conversation touched it: run_code's code and run_cell's
cells used or made it (read by `names.py`), the agent inspected or listed it (an `@var:`
reference is an inspection), or an answer named it while it was a kernel variable. The code of
the agent's run_code that made names is kept too (each turn records its new runs), so a name no
cell makes can be made again by that code, asked about first like any run_code.
"""

from __future__ import annotations

import os
import re
import uuid
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from .names import code_names
from .snapshots import KEEP_LIMIT, Kept
from .variables import is_state

INSTANCE = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
"""This kernel process's id: a restarted kernel is a new process, with a new id."""
MAX_NAMES = 300
"""Names a turn record keeps (the most recent ones)."""
HELD_RUNS = 40
"""Runs whose kept variables are held at most; older ones let theirs go (memory is bounded)."""
LOOKED_AT_ONCE = 50
"""Names one look (a listing, an inspection) makes the conversation's at most."""
NAMED_AT_ONCE = 30
"""Names one turn's answers make the conversation's at most: the first they name."""
MAX_ANSWER_CHARS = 50_000
"""Characters of a turn's answers read for names."""
MAX_RUNS = 20
"""The agent's runs kept to be run again (the most recent that made or changed names)."""
MAX_RUN_CHARS = 4000
"""Characters of one run's code kept; a longer run is not kept, and no rebuild runs it again."""
_ATTRIBUTE = "_copilot_nb_kernel_state"
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_WORD = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*")
"""A name as an answer writes it: not an attribute (`shape` of `df.shape`)."""


class KernelState:
    """One kernel's state as the agent sees it (one per shell: `kernel_state`)."""

    def __init__(self, instance: str = INSTANCE) -> None:
        self.instance = instance
        self.used: dict[str, None] = {}
        """Names the conversation used (ran, looked at, named), oldest first (an ordered set)."""
        self.earlier_kernel = ""
        """The kernel the resumed conversation last ran in ('' when nothing was resumed)."""
        self.keep_limit = KEEP_LIMIT
        """Bytes of variables a run may keep for Undo (0: none): `%copilot state --keep`."""
        self.held: deque[Kept] = deque()
        """The runs whose kept variables are held, oldest first (`hold` bounds them)."""
        self.runs: list[str] = []
        """The agent's run_code that made or changed names, oldest first (`MAX_RUNS`)."""
        self._unsaved: list[str] = []
        """Runs since the last saved turn: the next turn's record holds them."""

    @property
    def held_limit(self) -> int:
        """Bytes of kept variables held across runs: twice what one run may keep."""
        return 2 * self.keep_limit

    def hold(self, kept: Kept) -> list[str]:
        """Hold a run's kept variables; older runs let theirs go, oldest first, to stay within
        `HELD_RUNS` runs and `held_limit` bytes. The labels of those let go."""
        self.held.append(kept)
        return self._trim()

    def set_keep_limit(self, limit: int) -> list[str]:
        """What a run may keep from now on; held variables past the new bound are let go at
        once, oldest first. The labels of the runs let go."""
        self.keep_limit = limit
        return self._trim()

    def _trim(self) -> list[str]:
        let_go = []
        while self.held and (
            len(self.held) > HELD_RUNS or sum(k.size for k in self.held) > self.held_limit
        ):
            oldest = self.held.popleft()
            oldest.release()
            let_go.append(oldest.label)
        return let_go

    def ran(
        self,
        source: str,
        namespace: Mapping[str, Any],
        hidden: Mapping[str, Any] | None = None,
        *,
        agent: bool = False,
    ) -> None:
        """A run of `source` finished: the names it used or made that exist now are the
        conversation's (a name it only mentioned, a typo, never existed to be lost). The
        agent's own code (`agent`: run_code's) that made or changed some is kept as well."""
        found = code_names(source)
        self._use(sorted(found.touches), namespace, hidden or {})
        made = (found.binds | found.mutates) & namespace.keys()
        if agent and made and len(source) <= MAX_RUN_CHARS:
            self._keep_run(source)
            self._unsaved.append(source)

    def looked_at(
        self, names: Iterable[str], namespace: Mapping[str, Any], hidden: Mapping[str, Any]
    ) -> None:
        """The agent looked at these names (inspected, listed, attached by `@var:`): those that
        are the user's variables now are the conversation's, at most `LOOKED_AT_ONCE`."""
        self._use(names, namespace, hidden, limit=LOOKED_AT_ONCE)

    def named(self, text: str, namespace: Mapping[str, Any], hidden: Mapping[str, Any]) -> None:
        """An answer named these names: those that are the user's variables now are the
        conversation's, at most `NAMED_AT_ONCE`. Any name in code counts; in prose, a
        one-letter word ("a") does not."""
        text = text[:MAX_ANSWER_CHARS]
        code = " ".join(match.group() for match in _CODE.finditer(text))
        prose = [word for word in _WORD.findall(_CODE.sub(" ", text)) if len(word) > 1]
        words = dict.fromkeys([*_WORD.findall(code), *prose])
        self._use(words, namespace, hidden, limit=NAMED_AT_ONCE)

    def _use(
        self,
        names: Iterable[str],
        namespace: Mapping[str, Any],
        hidden: Mapping[str, Any],
        *,
        limit: int | None = None,
    ) -> None:
        """The names among `names` that hold the user's work now become the most recent used."""
        count = 0
        for name in names:
            if limit is not None and count >= limit:
                break
            if name in namespace and is_state(name, namespace[name], hidden):
                self.used.pop(name, None)
                self.used[name] = None
                count += 1
        while len(self.used) > MAX_NAMES:
            del self.used[next(iter(self.used))]

    def _keep_run(self, source: str) -> None:
        if source in self.runs:
            self.runs.remove(source)
        self.runs.append(source)
        del self.runs[:-MAX_RUNS]

    def resumed(self, kernel: str, names: Iterable[str], runs: Iterable[str] = ()) -> None:
        """A saved conversation was taken up: the kernel it last ran in, the names it used,
        and the agent's runs its turns kept, oldest first."""
        self.earlier_kernel = kernel
        self.used = dict.fromkeys(names)
        self.runs, self._unsaved = [], []
        for source in runs:
            if isinstance(source, str) and len(source) <= MAX_RUN_CHARS:
                self._keep_run(source)

    def forget(self) -> None:
        """A new conversation: nothing of the old one's names is its concern."""
        self.used, self.earlier_kernel = {}, ""
        self.runs, self._unsaved = [], []

    @property
    def restarted(self) -> bool:
        """Whether the resumed conversation last ran in another kernel."""
        return bool(self.earlier_kernel) and self.earlier_kernel != self.instance

    def lost(self, namespace: Mapping[str, Any]) -> list[str]:
        """The names the conversation used that this fresh kernel lacks ([] without a restart)."""
        if not self.restarted:
            return []
        return sorted(name for name in self.used if name not in namespace)

    def record(self) -> dict[str, Any]:
        """What a saved turn keeps: this kernel's id, the names used so far and the agent's
        runs since the last record (a resume reads every turn's)."""
        found: dict[str, Any] = {"kernel": self.instance, "names": list(self.used)[-MAX_NAMES:]}
        if self._unsaved:
            found["runs"], self._unsaved = self._unsaved[-MAX_RUNS:], []
        return found


def kernel_state(shell: Any | None) -> KernelState:
    """The shell's kernel state (one process-wide one where there is no shell)."""
    owner = shell if shell is not None else _NO_SHELL
    found = getattr(owner, _ATTRIBUTE, None)
    if not isinstance(found, KernelState):
        found = KernelState()
        setattr(owner, _ATTRIBUTE, found)
    return found


class _Holder:
    """Where a context without a shell keeps its state."""


_NO_SHELL = _Holder()
