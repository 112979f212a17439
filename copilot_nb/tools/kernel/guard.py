"""Around every run of the agent's code in the user's namespace: keep what it will change, and
afterwards make that a change undo can take back.

run_code and run_cell both call `before_run` and `after_run`, so a run from either (and every
cell `rebuild_names` runs, through run_cell) is kept the same way: its variables go on the
turn's checkpoint beside its files and cells (`%copilot undo` of the turn puts them back), and a
cell run in review also puts them back on the cell's Undo (`tools/review.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

from ...kernel_bridge import hidden_names
from ...text import human_bytes
from ..context import ToolContext
from .names import code_names
from .snapshots import Kept, keep
from .state import kernel_state

AGENT_CODE = "run_code"
"""The label run_code gives its runs: the agent's own code, which a rebuild may run again
where no cell makes what it made (`state.py`)."""


class KeptVariables:
    """A run's kept variables as a change a turn can take back (`workspace/snapshots.py`)."""

    def __init__(
        self, namespace: MutableMapping[str, Any], kept: Kept, earlier: Iterable[Kept] = ()
    ) -> None:
        self.namespace = namespace
        self.kept = kept
        self.names = kept.names
        self.earlier = earlier
        """The runs held in this kernel: those before this one follow what its Undo puts back."""

    def changed_since(self) -> list[str]:
        """The names the user set or changed after the run: Undo would overwrite them."""
        return self.kept.changed_since(self.namespace)

    def take_back(self) -> tuple[str, bool, str]:
        """Put the variables back (the checkpoint checked `changed_since` first, or was forced)."""
        what = f"kernel variables of {self.kept.label}: {', '.join(self.names)}"
        if self.kept.taken_back:
            yours = self.kept.kept_yours
            but = f", except {', '.join(yours)} (changed since the run)" if yours else ""
            return what, False, f"already put back by the cell's Undo{but}"
        if self.kept.released:
            return what, False, "let go to keep the kernel's memory bounded"
        self.kept.put_back(self.namespace, force=True, earlier=list(self.earlier))
        return what, True, "as they were before the run"


def before_run(ctx: ToolContext, source: str, label: str) -> Kept | None:
    """Copies of the names `source` binds, mutates or deletes (None when it changes none)."""
    found = code_names(source)
    if not found.changes:
        return None
    state = kernel_state(ctx.shell)
    hidden = hidden_names(ctx.shell)
    kept = keep(ctx.namespace(), found.changes, limit=state.keep_limit, hidden=hidden, label=label)
    if kept.values and ctx.workspace is not None:  # it may end after its turn: Undo is that turn's
        kept.turn = ctx.workspace.checkpoints.hold()
    return kept


def after_run(ctx: ToolContext, source: str, kept: Kept | None) -> str:
    """The run is over: its names are the conversation's; its kept variables go on the turn's
    checkpoint. What Undo will and will not put back ('' when the run changed no name)."""
    namespace = ctx.namespace()
    state = kernel_state(ctx.shell)
    agent = kept is not None and kept.label == AGENT_CODE
    state.ran(source, namespace, hidden_names(ctx.shell), agent=agent)
    if kept is None:
        return ""
    kept.settle(namespace)
    let_go: list[str] = []
    if kept.values and ctx.workspace is not None:
        ctx.workspace.checkpoints.record_other(
            KeptVariables(namespace, kept, state.held), into=kept.turn
        )
        let_go = state.hold(kept)
    elif ctx.workspace is None:
        return ""
    return ". ".join(part for part in (kept.note(), let_go_note(let_go, state.held_limit)) if part)


def let_go_note(labels: list[str], held_limit: int) -> str:
    """What letting older runs' variables go means for their Undo ('' when none was)."""
    if not labels:
        return ""
    runs = "1 earlier run" if len(labels) == 1 else f"{len(labels)} earlier runs"
    return (
        f"Undo can no longer put back the variables of {runs} (the kernel holds at most "
        f"{human_bytes(held_limit)} of them): {', '.join(labels)}"
    )
