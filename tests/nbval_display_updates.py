"""nbval, taught `update_display_data` as JupyterLab and nbclient apply it.

A `%%copilot` cell shows one output and updates it in place while the reply streams; a notebook
saved by JupyterLab or nbclient holds the last update. nbval 0.11 reads only the first display
(and prints "unhandled iopub msg: update_display_data"), so it would compare a placeholder. This
plugin holds back each display that has a display id until the cell is idle, applies the updates
to it, and then hands nbval the display as it finally stood.
"""

from __future__ import annotations

from typing import Any

import pytest
from nbval.kernel import RunningKernel

_original_get_message = RunningKernel.get_message


def _get_message(self: RunningKernel, stream: str, timeout: float | None = None) -> Any:
    if stream != "iopub":
        return _original_get_message(self, stream, timeout)
    ready: list[dict[str, Any]] = self.__dict__.setdefault("_displays_ready", [])
    held: dict[str, dict[str, Any]] = self.__dict__.setdefault("_displays_held", {})
    while not ready:
        message = _original_get_message(self, stream, timeout)
        kind, content = message["msg_type"], message["content"]
        display_id = (content.get("transient") or {}).get("display_id")
        if kind == "display_data" and display_id:
            held[display_id] = message
        elif kind == "update_display_data":
            if display_id in held:
                first = held[display_id]
                first["content"] = {
                    **first["content"],
                    "data": content["data"],
                    "metadata": content.get("metadata", {}),
                }
        elif kind == "status" and content.get("execution_state") == "idle" and held:
            ready.extend(held.values())
            held.clear()
            ready.append(message)
        else:
            return message
    return ready.pop(0)


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    RunningKernel.get_message = _get_message  # type: ignore[method-assign]
