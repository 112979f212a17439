"""`%%copilot?` shows the magic's help: its usage and options, as `%copilot --help` would.

IPython's help for a magic ends with the file it is defined in, a path into the installed
package that tells a user nothing they can act on. An inspector MIME hook (IPython's own
extension point for help) gives our magic's `?` its docstring alone; `??` (the source, asked
for) and every other object keep IPython's help. The hook chains to any hook installed before
it for the same MIME type, and unloading puts that one back.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from .magics import CopilotMagics

MIME_TYPES = ("text/plain", "text/html")
Hook = Callable[[Any], Any]


def install_magic_help(shell: Any) -> None:
    """Have `%%copilot?` and `%copilot?` show usage and options only."""
    inspector = getattr(shell, "inspector", None)
    hooks = getattr(inspector, "mime_hooks", None)
    if inspector is None or hooks is None:  # an IPython before 8.22: its help stays as it is
        return
    installed = dict(hooks)
    for mime in MIME_TYPES:
        if not isinstance(installed.get(mime), _UsageOnly):
            installed[mime] = _UsageOnly(mime, installed.get(mime))
    inspector.mime_hooks = installed


def uninstall_magic_help(shell: Any) -> None:
    """Put back the hooks there were before `install_magic_help`."""
    inspector = getattr(shell, "inspector", None)
    hooks = getattr(inspector, "mime_hooks", None)
    if inspector is None or hooks is None:
        return
    installed = dict(hooks)
    for mime in MIME_TYPES:
        hook = installed.get(mime)
        if isinstance(hook, _UsageOnly):
            if hook.previous is None:
                del installed[mime]
            else:
                installed[mime] = hook.previous
    inspector.mime_hooks = installed


class _UsageOnly:
    """The hook for one MIME type: our magic's docstring alone, else the previous hook's."""

    def __init__(self, mime: str, previous: Hook | None) -> None:
        self.mime = mime
        self.previous = previous

    def __call__(self, data: Any) -> Any:
        if not _is_ours(data):
            return self.previous(data) if self.previous is not None else None
        usage = str(data.info_dict.get("docstring") or "").strip("\n")
        if self.mime == "text/html":
            return [("Docstring", f"<pre>{html.escape(usage)}</pre>")]
        return [("Docstring", usage)]


def _is_ours(data: Any) -> bool:
    """The `?` (not `??`) of the `copilot` magic."""
    info = getattr(data, "info", None)
    method = getattr(data, "obj", None)
    return (
        bool(getattr(info, "ismagic", False))
        and getattr(data, "detail_level", 0) == 0
        and getattr(method, "__func__", None) is CopilotMagics.copilot
    )
