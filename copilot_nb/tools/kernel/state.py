"""The kernel's state as the agent knows it: which kernel this is, the names its runs used, and
what a restart lost.

A restart is detected, not guessed: every kernel process gets an instance id of its own
(`INSTANCE`), each saved turn records the id of the kernel it ran in and the names the
conversation's runs used or made so far (run_code's code and run_cell's cells, read by
`names.py`), and a resumed conversation whose last turn ran in another kernel ran before a
restart. The names it used that the fresh kernel lacks are what the restart lost; the next
turn's context block says so, with the cells that make them (`rebuild.py`).
"""

from __future__ import annotations

import os
import uuid
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from .names import code_names
from .snapshots import KEEP_LIMIT, Kept

INSTANCE = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
"""This kernel process's id: a restarted kernel is a new process, with a new id."""
MAX_NAMES = 300
"""Names a turn record keeps (the most recent ones)."""
HELD_RUNS = 40
"""Runs whose kept variables are held at most; older ones let theirs go (memory is bounded)."""
_ATTRIBUTE = "_copilot_nb_kernel_state"


class KernelState:
    """One kernel's state as the agent sees it (one per shell: `kernel_state`)."""

    def __init__(self, instance: str = INSTANCE) -> None:
        self.instance = instance
        self.used: dict[str, None] = {}
        """Names the conversation's runs used or made, oldest first (an ordered set)."""
        self.earlier_kernel = ""
        """The kernel the resumed conversation last ran in ('' when nothing was resumed)."""
        self.keep_limit = KEEP_LIMIT
        """Bytes of variables a run may keep for Undo (0: none): `%copilot state --keep`."""
        self.held: deque[Kept] = deque()
        """The runs whose kept variables are held, oldest first (`hold` bounds them)."""

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

    def ran(self, source: str, namespace: Mapping[str, Any]) -> None:
        """A run of `source` finished: the names it used or made that exist now are the
        conversation's (a name it only mentioned, a typo, never existed to be lost)."""
        found = code_names(source)
        for name in sorted(found.touches):
            if name in namespace and not name.startswith("_"):
                self.used.pop(name, None)
                self.used[name] = None

    def resumed(self, kernel: str, names: Iterable[str]) -> None:
        """A saved conversation was taken up: the kernel it last ran in, the names it used."""
        self.earlier_kernel = kernel
        self.used = dict.fromkeys(names)

    def forget(self) -> None:
        """A new conversation: nothing of the old one's names is its concern."""
        self.used, self.earlier_kernel = {}, ""

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
        """What a saved turn keeps: this kernel's id and the names used so far."""
        return {"kernel": self.instance, "names": list(self.used)[-MAX_NAMES:]}


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
