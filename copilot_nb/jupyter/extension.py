"""`%load_ext copilot_nb` and `%unload_ext copilot_nb`: the magics registered, the cell
transformer, the `%copilot` completer and the magic's `?` help installed, the live channel
opened, the notebook's saved conversation taken up, and the slow imports warmed while the user
types."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..kernel_bridge import user_namespace
from .cell_transform import LINE_PREFIX, complete_line, transform_copilot_cell
from .live_channel import live_channel
from .magics import CopilotMagics

if TYPE_CHECKING:
    from ..agent.session import CopilotSession


WARM_UP = "copilot_nb-warm-up"
"""The name of the thread that imports the agent while the user types."""


def _warm_up() -> None:
    """Load the agent, its tools and the cell's view while the user types the first request, so
    the first `%%copilot` cell does not wait for them, nor `%load_ext` itself. Not jsonschema,
    the slowest import (its format checkers build a grammar): with Run All the first request
    runs at once, and would share the interpreter with it; a tool's first call imports it, off
    the kernel's loop."""
    from ..agent import session  # noqa: F401
    from . import cell_view  # noqa: F401


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext copilot_nb`: register the magics, the cell transformer and the live channel."""
    first = "CopilotMagics" not in shell.magics_manager.registry
    if first:
        shell.register_magics(CopilotMagics)
        from ..agent.model_spec import provider_hint

        if hint := provider_hint(shell.magics_manager.registry["CopilotMagics"].model):
            print(hint)
    if transform_copilot_cell not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(transform_copilot_cell)
    completers = shell.strdispatchers.get("complete_command")
    hooked = completers.strs.get(LINE_PREFIX) if completers is not None else None
    if hooked is None or all(
        getattr(h, "__func__", h) is not complete_line for _, h in hooked.chain
    ):
        shell.set_hook("complete_command", complete_line, str_key=LINE_PREFIX)
    from .failures import install_failure_record
    from .magic_help import install_magic_help
    from .quiet_stop import install_quiet_stop

    install_quiet_stop(shell)
    install_failure_record(shell)
    install_magic_help(shell)
    live_channel(shell).install()
    _resume_saved(shell)
    if first:  # after the load path's own imports, so the two never wait on each other's
        threading.Thread(target=_warm_up, name=WARM_UP, daemon=True).start()


def _resume_saved(shell: Any) -> None:
    """Take up the notebook's saved conversation, if it has one (the session loads only then)."""
    magics = shell.magics_manager.registry["CopilotMagics"]
    if not magics.resume or (magics._session is None and not _saved(shell)) or magics.cassette:
        return
    from .commands.conversations import resume_on_load

    resume_on_load(magics.session, magics)


def _saved(shell: Any) -> bool:
    """Whether this kernel's conversation file holds anything; with no file there at all (a new
    notebook), neither the store nor the cassettes are imported to say so."""
    from ..agent.conversations.place import saved_path

    path = saved_path(user_namespace(shell))
    if not os.path.lexists(path):
        return False
    from ..agent.conversations.store import ConversationFile

    return ConversationFile(path).exists()


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext copilot_nb`: remove the cell transformer and close the live channel
    (IPython keeps magics registered)."""
    if transform_copilot_cell in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(transform_copilot_cell)
    from .failures import uninstall_failure_record
    from .magic_help import uninstall_magic_help
    from .quiet_stop import uninstall_quiet_stop

    uninstall_quiet_stop(shell)
    uninstall_failure_record(shell)
    uninstall_magic_help(shell)
    live_channel(shell).uninstall()
    magics = shell.magics_manager.registry.get("CopilotMagics")
    if magics is not None and magics._session is not None:
        magics._session.stop_servers()


def copilot_magics(shell: Any = None) -> CopilotMagics:
    """The loaded `CopilotMagics` of this kernel (loading the extension if needed)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        raise UsageError("copilot_nb needs an IPython kernel or shell")
    magics = shell.magics_manager.registry.get("CopilotMagics")
    if magics is None:
        load_ipython_extension(shell)
        magics = shell.magics_manager.registry["CopilotMagics"]
    return magics


def session(shell: Any = None) -> CopilotSession:
    """The kernel's shared conversation (the chat panel and `%%copilot` cells use the same one)."""
    return copilot_magics(shell).session


async def _run_cell(line: str, cell: str) -> None:
    """What a transformed `%%copilot` cell awaits."""
    await copilot_magics().run_cell(line, cell)


async def _run_line(line: str) -> None:
    """What a transformed `%copilot mcp ...` cell awaits."""
    await copilot_magics().run_line(line)
