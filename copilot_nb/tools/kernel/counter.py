"""A number of its own for each cell the agent runs, from the kernel's own counter.

IPython numbers every request it runs (the cell's `[7]:`, `In[7]`) and moves its counter on as the
request starts; ipykernel answers the request with the counter less one, and that is the number
the page shows. A cell the agent runs is no request, so it would show the number of the request
it ran in (the `%%copilot` cell's: two `[7]:`). Instead it takes the counter's next number as a
request does: its source goes into the kernel's history under it (`In[8]`, `_i8`, `%history`)
and the counter moves on, so no cell the user runs later takes it again.

The request the agent ran in would then be answered with that same number. So, as it ends
(IPython's `post_run_cell`, just before the answer), it takes the next one, its source recorded
again under it: the `%%copilot` cell shows `[9]:`, after the cells its agent ran, in the order
they finished. A run from a comm (the chat panel) is in no request and needs no more.
"""

from __future__ import annotations

from typing import Any

from ...kernel_bridge import request_header

_RENUMBERING = "_copilot_nb_renumbering"
"""The shell attribute naming the request that will take a new number as it ends."""


def take_number(shell: Any | None, code: str, source: str) -> int | None:
    """The execution count of a cell the agent ran (`code` is its `source` as IPython
    transformed it): the kernel's next one, recorded in its history. None without a shell."""
    count = getattr(shell, "execution_count", None)
    if isinstance(count, bool) or not isinstance(count, int):
        return None
    _record(shell, count, code, source)
    _renumber_request(shell)
    return count


def _record(shell: Any, number: int, code: str, source: str) -> None:
    """`number` is this source's, in the kernel's history too; the counter moves past it."""
    history = getattr(shell, "history_manager", None)
    if history is not None:
        history.store_inputs(number, code, source)
    shell.execution_count = number + 1


def _renumber_request(shell: Any) -> None:
    """The request running now (if the agent runs within one) takes a new number as it ends."""
    request = _request_id(shell)
    if not request or getattr(shell, _RENUMBERING, None) == request:
        return
    setattr(shell, _RENUMBERING, request)

    def renumber(result: Any) -> None:
        shell.events.unregister("post_run_cell", renumber)
        setattr(shell, _RENUMBERING, None)
        info = getattr(result, "info", None)
        if not getattr(info, "store_history", False):
            return  # a request outside the history shows no number
        raw = str(getattr(info, "raw_cell", "") or "")
        code = str(getattr(info, "transformed_cell", "") or raw)
        _record(shell, shell.execution_count, code, raw)

    shell.events.register("post_run_cell", renumber)


def _request_id(shell: Any) -> str:
    """The id of the execute request running now ('' when the code runs in none: a comm's)."""
    header = request_header(shell)
    if header.get("msg_type") != "execute_request":
        return ""
    return str(header.get("msg_id") or "")
