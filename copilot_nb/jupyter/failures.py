"""Which cells raised errors in this kernel, kept as they run.

IPython forgets which run failed (its `last_execution_result`) as soon as another cell runs, and
ipykernel its traceback; `sys.last_value` keeps only the last exception. A fix asked for later
(a `%%copilot --fix` cell, the chat panel's Fix with Copilot) needs the failing cell's id, run
and error, so a `post_run_cell` callback installed at `%load_ext` keeps the last failing run and
the latest failing run of each cell, and forgets a cell's once it runs without error. Apart
from the fix's own modules so that `%load_ext` installs it without importing the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError

from ..config import COPILOT_CELL_CALL
from .quiet_stop import TurnStopped

MAX_CELLS = 50
"""Failing cells kept by id (the oldest go first)."""
_KEPT = "_copilot_nb_failures"
_COPILOT_CALL = COPILOT_CELL_CALL.rsplit(".", 1)[0]
"""What IPython runs for a `%%copilot` cell or an awaited `%copilot` command, once rewritten."""


@dataclass(frozen=True, kw_only=True)
class Failure:
    """A run that ended in an error: the exception, and which cell ran."""

    error: BaseException
    execution_count: int | None
    cell_id: str
    """The id the front end sent with the run (JupyterLab, Notebook 7, VS Code); "" if none."""
    source: str
    """The cell's source as it ran."""


@dataclass(kw_only=True)
class Failures:
    """A shell's failing runs since `%load_ext`: the last one, and each cell's latest."""

    last: Failure | None = None
    by_cell: dict[str, Failure] = field(default_factory=dict)
    seen: bool = False
    """Whether any run failed since the record was installed (else only Python's own
    `sys.last_value` knows of an error: one from before `%load_ext`)."""

    def failed(self, failure: Failure) -> None:
        self.last, self.seen = failure, True
        if failure.cell_id:
            self.by_cell.pop(failure.cell_id, None)
            self.by_cell[failure.cell_id] = failure
            while len(self.by_cell) > MAX_CELLS:
                del self.by_cell[next(iter(self.by_cell))]

    def succeeded(self, cell_id: str) -> None:
        """A cell ran without error: it no longer fails, and the last failure is the latest
        of a cell that still does."""
        if not cell_id:
            return
        self.by_cell.pop(cell_id, None)
        if self.last is not None and self.last.cell_id == cell_id:  # the one before it, if any
            self.last = next(reversed(self.by_cell.values()), None)


class _Keep:
    """The `post_run_cell` callback."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, result: Any) -> None:
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        info = getattr(result, "info", None)
        source = str(getattr(info, "raw_cell", None) or "")
        cell_id = str(getattr(info, "cell_id", None) or "")
        if copilot_own(source):
            return  # a copilot cell's own end (a stop, a usage mistake) is nothing to fix
        record = failures_of(self.shell)
        if record is None:
            return
        if error is None or not user_error(error):
            record.succeeded(cell_id)
            return
        record.failed(
            Failure(
                error=error,
                execution_count=getattr(result, "execution_count", None),
                cell_id=cell_id,
                source=source,
            )
        )


def install_failure_record(shell: Any) -> None:
    """Keep this shell's failing runs from now on (once, however often it is called)."""
    events = getattr(shell, "events", None)
    if events is not None and not _installed(events):
        if failures_of(shell) is None:
            setattr(shell, _KEPT, Failures())
        events.register("post_run_cell", _Keep(shell))


def uninstall_failure_record(shell: Any) -> None:
    events = getattr(shell, "events", None)
    if events is not None:
        for callback in _installed(events):
            events.unregister("post_run_cell", callback)


def failures_of(shell: Any) -> Failures | None:
    """The shell's record, or None where it was never installed."""
    kept = getattr(shell, _KEPT, None)
    return kept if isinstance(kept, Failures) else None


def user_error(error: BaseException) -> bool:
    """An error of the user's code, not a magic's usage message or a stopped copilot cell."""
    return not isinstance(error, (UsageError, TurnStopped))


def copilot_own(source: str) -> bool:
    """A copilot cell or command (`%%copilot`, `%copilot fix`), as typed or as IPython ran it."""
    return source.lstrip().startswith(("%copilot", "%%copilot")) or _COPILOT_CALL in source


def _installed(events: Any) -> list[_Keep]:
    return [c for c in events.callbacks.get("post_run_cell", []) if isinstance(c, _Keep)]
