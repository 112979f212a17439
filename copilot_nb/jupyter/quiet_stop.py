"""A stopped `%%copilot` cell ends in error, so that Run All stops there, with nothing shown.

Apart from the cell's view so that `%load_ext` installs the handler without importing the view,
which imports the agent: the agent loads in the warm-up thread while the user types.
"""

from __future__ import annotations

from typing import Any


class TurnStopped(Exception):
    """Ends a stopped cell in error, so that Run All stops there as after any interrupt, while
    IPython shows nothing for it (`install_quiet_stop`): the transcript already says ■ Stopped."""


def _shown_as_nothing(
    shell: Any, etype: type, value: BaseException, tb: Any, **_: Any
) -> list[str]:
    return []


def install_quiet_stop(shell: Any) -> None:
    """Have IPython show nothing for `TurnStopped` (IPython keeps one such handler per shell:
    one the user or another extension set is left alone, and a stopped cell then ends ok)."""
    if not shell.custom_exceptions:
        shell.set_custom_exc((TurnStopped,), _shown_as_nothing)


def uninstall_quiet_stop(shell: Any) -> None:
    if tuple(shell.custom_exceptions) == (TurnStopped,):
        shell.set_custom_exc((), None)


def stop_ends_in_error(shell: Any) -> bool:
    """Whether a stopped cell may end in error without a traceback being shown."""
    return TurnStopped in tuple(getattr(shell, "custom_exceptions", ()) or ())
