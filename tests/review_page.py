"""What the review browser tests and `benchmarks/bench_review.py` share: the review protocol's
requests, sent from the real kernel over the live comm, and reading what the page sent back.

The kernel runs code the page sends it (the notebook's own kernel connection, as a cell would,
but without adding a cell): it finds the open notebook through copilot_nb's live channel and
sends `apply` (the changes as the agent's tools make them in review mode: the stamp and the
review record in the cell's metadata, a deleted cell's record on its `delete`) or
`review_files`, each record signed in the kernel with the user's key as the tools sign theirs
(`copilot_nb/tools/review/proof.py`). What the front end sends the kernel (`{event: 'review',
...}`) is read off the page's kernel websocket.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from tests.lab_server import SLOWDOWN
from tests.live_page import live_model

RUN_IN_KERNEL = """
async ([code]) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code, store_history: false });
  const said = [];
  future.onIOPub = msg => {
    const c = msg.content;
    if (msg.header.msg_type === 'stream') said.push(c.text);
    if (msg.header.msg_type === 'error') said.push('ERROR ' + c.ename + ': ' + c.evalue);
  };
  await future.done;
  return said.join('');
}
"""
SIGN = """
import json as _json
from copilot_nb.tools.review import proof as _proof

def _signed(fields):
    for change in fields.get("changes", []):
        cell = change.get("cell") or {}
        meta = (change.get("metadata") or cell.get("metadata") or {}).get("copilot_nb") or {}
        if "review" in meta:
            meta["review"] = _proof.sign_cell(change.get("cell_id") or cell["id"], meta["review"])
        if "review" in change:
            change["review"] = _proof.sign_deleted(change["review"])
    if "files" in fields:
        fields["files"] = [_proof.sign_file(f) for f in fields["files"]]
    return fields
"""
"""Kernel code defining `_signed(fields)`: a request's review records signed with the user's key,
as the agent's tools sign theirs."""
SEND = """
from pathlib import Path as _Path
from copilot_nb.jupyter.live_channel import live_channel as _live_channel
_view = await _live_channel(get_ipython()).find(_Path({path!r}))
print(_json.dumps(await _view.request({op!r}, **_signed(_json.loads({fields!r})))))
"""


def in_kernel(page: Any, code: str) -> str:
    """Run code in the open notebook's kernel; what it printed (an error raises). Waits for
    the page's kernel connection first (after a reload the session comes a moment later)."""
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel",
        timeout=int(120_000 * SLOWDOWN),
    )
    said = str(page.evaluate(RUN_IN_KERNEL, [code]))
    if "ERROR " in said:
        raise AssertionError(said)
    return said


def send(page: Any, path: Path, op: str, **fields: Any) -> dict[str, Any]:
    """One live-channel request from the kernel to the open notebook at `path`; its result."""
    code = SIGN + SEND.format(path=str(path), op=op, fields=json.dumps(fields))
    return dict(json.loads(in_kernel(page, code).strip().splitlines()[-1]))


def stamp(review: dict[str, Any]) -> dict[str, Any]:
    return {"change": "edited", "model": "scripted", "at": "2026-11-24T21:00:00Z", "review": review}


def plain(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell as the review's `before` holds it (nbformat JSON, no review record)."""
    before = copy.deepcopy(cell)
    before.get("metadata", {}).get("copilot_nb", {}).pop("review", None)
    return before


def edit(cell: dict[str, Any], source: str, turn: str = "t1", ran: bool = False) -> dict[str, Any]:
    review = {"turn": turn, "kind": "edit", "before": plain(cell), "ran": ran}
    return {
        "kind": "set_source",
        "cell_id": cell["id"],
        "expected": cell["source"],
        "source": source,
        "metadata": {"copilot_nb": stamp(review)},
        "clear_outputs": True,
    }


def insert(after_id: str | None, source: str, turn: str = "t1") -> dict[str, Any]:
    review = {"turn": turn, "kind": "insert", "before": None, "ran": False}
    cell = {
        "id": uuid.uuid4().hex[:8],
        "cell_type": "code",
        "source": source,
        "metadata": {"copilot_nb": {**stamp(review), "change": "inserted"}},
        "outputs": [],
        "execution_count": None,
    }
    return {"kind": "insert", "after_id": after_id, "cell": cell}


def delete(cell: dict[str, Any], after_id: str | None, turn: str = "t1") -> dict[str, Any]:
    review = {"turn": turn, "before": plain(cell), "after_id": after_id}
    return {"kind": "delete", "cell_id": cell["id"], "expected": cell["source"], "review": review}


def watch_events(page: Any) -> list[dict[str, Any]]:
    """Every `{event: ...}` the page sends the kernel from now on (read off its websocket)."""
    seen: list[dict[str, Any]] = []

    def on_socket(socket: Any) -> None:
        socket.on("framesent", lambda payload: seen.extend(_events(payload)))

    page.on("websocket", on_socket)
    return seen


def _events(payload: Any) -> list[dict[str, Any]]:
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
    if '"event"' not in text:
        return []
    found = []
    decoder = json.JSONDecoder()
    for start in [i for i, ch in enumerate(text) if ch == "{"]:
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        data = value.get("data") if isinstance(value, dict) else None
        if isinstance(data, dict) and "event" in data and data["event"] != "path":
            found.append(data)
    return found


def outcomes(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The review outcomes sent so far: (cell id, outcome, by)."""
    return [
        (o["cell_id"], o["outcome"], o["by"])
        for e in events
        if e.get("event") == "review"
        for o in e["outcomes"]
    ]


CELLS = ("%load_ext copilot_nb", "a = 1\na", "b = 2", "c = 3", "# the agent deletes me")


def cells_of(page: Any) -> list[dict[str, Any]]:
    return list(live_model(page)["cells"])


def bars(page: Any) -> Any:
    return page.locator(".jp-Notebook .jp-Cell > .cnb-review")


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)
