"""A `%%copilot` cell's output grown in place by the page, instead of resent whole.

A display update carries the whole output, as HTML and as text, so a long answer streamed into a
cell costs the front end many times its own bytes. Where the notebook is open in a page with
copilot_nb's extension (live protocol 2 and later), each update while the answer streams sends
only what changed of the output's HTML instead: how much of the HTML the page shows to keep, and
what follows it (`{op: 'grow', output, from, keep, add}` over the live comm; lengths in UTF-16
code units, as the page counts). The page sets the grown HTML into that output in the notebook's
model, where JupyterLab renders it as it renders the kernel's own outputs. The HTML is still the
kernel's `safe_html`: the page only joins pieces the kernel made, it renders no model text.

Comm messages and display updates travel on the same IOPub socket, so the page receives them in
the order sent. The output is found by a mark in its metadata (`copilot_nb.stream`), since a
display id never reaches the notebook's model. The turn's last update is still a whole display
update, so the saved notebook and every other front end get the complete output; a page that is
out of step (it cannot find the output, or shows HTML of another length) ignores a growth, and
the next whole update puts it right.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

GROW_PROTOCOL = 2
"""The first live protocol whose pages grow an output (`frontend/src/outputGrowth.ts`)."""


def utf16_length(text: str) -> int:
    """`text.length` in JavaScript: astral characters (most emoji) count twice."""
    return len(text.encode("utf-16-le")) // 2


def common_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share at the start: a binary search of slice
    comparisons, which run in C, rather than a loop over characters in Python."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class PageGrowth:
    """One output's growth sent to the page: `send` delivers a comm message to it."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self.output = uuid.uuid4().hex
        self._html = ""
        """The HTML the page shows in the output."""
        self._units = 0
        """Its length as the page counts it."""

    @property
    def metadata(self) -> dict[str, Any]:
        """The output's mark, by which the page finds it."""
        return {"copilot_nb": {"stream": self.output}}

    def shown(self, html: str) -> None:
        """The output was sent whole (a display, or a display update) with this HTML."""
        self._html, self._units = html, utf16_length(html)

    def grow(self, html: str) -> None:
        """Send the page what turns the HTML it shows into `html`."""
        keep = common_prefix(self._html, html)
        kept = utf16_length(html[:keep])
        self._send(
            {
                "op": "grow",
                "output": self.output,
                "from": self._units,
                "keep": kept,
                "add": html[keep:],
            }
        )
        self.shown(html)


def page_for_request(shell: Any) -> PageGrowth | None:
    """Growth towards the page that sent the request running now, if it has copilot_nb's
    extension at `GROW_PROTOCOL` or later; None otherwise (whole updates then)."""
    channel = getattr(shell, "_copilot_nb_live", None)  # never made here: only if installed
    if channel is None:
        return None
    view = channel.request_view()
    if view is None or view.closed or view.protocol < GROW_PROTOCOL:
        return None
    from .live_view import next_id

    return PageGrowth(lambda data: view.comm.send({"id": next_id(), **data}))
