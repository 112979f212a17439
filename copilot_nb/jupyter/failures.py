"""Which cell raised the kernel's last error, kept as it happens.

IPython forgets which run failed (its `last_execution_result`) as soon as another cell runs, and
ipykernel its traceback; `sys.last_value` keeps only the exception. A fix asked for later (a
`%%copilot --fix` cell, the chat panel) needs the failing cell's id and run, so a
`post_run_cell` callback installed at `%load_ext` keeps them. Apart from the fix's own modules
so that `%load_ext` installs it without importing the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ..config import COPILOT_CELL_CALL
from .quiet_stop import TurnStopped

_KEPT = "_copilot_nb_failure"
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


class _Keep:
    """The `post_run_cell` callback: a failing run replaces the one kept before."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, result: Any) -> None:
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        info = getattr(result, "info", None)
        source = str(getattr(info, "raw_cell", None) or "")
        if error is None or not user_error(error) or copilot_own(source):
            return  # a copilot cell's own end (a stop, a usage mistake) is nothing to fix
        failure = Failure(
            error=error,
            execution_count=getattr(result, "execution_count", None),
            cell_id=str(getattr(info, "cell_id", None) or ""),
            source=source,
        )
        setattr(self.shell, _KEPT, failure)


def user_error(error: BaseException) -> bool:
    """An error of the user's code, not a magic's usage message or a stopped copilot cell."""
    return not isinstance(error, (UsageError, TurnStopped))


def copilot_own(source: str) -> bool:
    """A copilot cell or command (`%%copilot`, `%copilot fix`), as typed or as IPython ran it."""
    return source.lstrip().startswith(("%copilot", "%%copilot")) or _COPILOT_CALL in source


def install_failure_record(shell: Any) -> None:
    """Keep each failing run of this shell from now on (once, however often it is called)."""
    events = getattr(shell, "events", None)
    if events is not None and not _installed(events):
        events.register("post_run_cell", _Keep(shell))


def uninstall_failure_record(shell: Any) -> None:
    events = getattr(shell, "events", None)
    if events is not None:
        for callback in _installed(events):
            events.unregister("post_run_cell", callback)


def last_failure(shell: Any) -> Failure | None:
    """The last run of a user's cell in this shell that failed, since the record was installed."""
    kept = getattr(shell, _KEPT, None)
    return kept if isinstance(kept, Failure) else None


def _installed(events: Any) -> list[_Keep]:
    return [c for c in events.callbacks.get("post_run_cell", []) if isinstance(c, _Keep)]
