"""A stand-in for copilot_nb's front-end extension (`frontend/src/index.ts`), for kernel tests.

It is a second jupyter_client connection to the kernel that opens a `copilot_nb.live` comm for
one notebook document, keeps that document in memory (nbformat cell dicts) and answers the
kernel's requests as index.ts does: `snapshot` (cells with `running`, and `dirty`), `apply`
(each change checked in order against a dry run of the cells, then all made; `conflict` /
`missing` / `bad_request` codes otherwise, and none made), `set_outputs`. Everything it received is kept in
`received`, what it answered in `replies`.

A test plays the user by changing `cells` (under `lock`) while the kernel works, and plays a
front end that stopped answering with `ignore_next`.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from tests.patience import patient

TARGET = "copilot_nb.live"
CELL_KEYS = ("id", "cell_type", "source", "metadata", "outputs", "execution_count", "attachments")
"""What a cell of JupyterLab's shared model keeps of a cell it is given (`running` is not one)."""


class RequestError(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class LiveFrontEnd:
    """One notebook open in a front end with copilot_nb's extension, attached to a kernel."""

    def __init__(
        self,
        manager: Any,
        *,
        path: str,
        server_root: Path,
        client: str,
        cells: list[dict[str, Any]],
        app: str = "JupyterLab",
        dirty: bool = True,
    ) -> None:
        self.path = path
        self.server_root = server_root
        self.client_id = client
        self.app = app
        self.cells = [_stored(cell) for cell in cells]
        self.dirty = dirty
        self.received: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        """What the kernel said unasked (`review_file_result`)."""
        self.kernel: str | None = None
        """The kernel process it is attached to (`{event: 'kernel', instance}`)."""
        self.metadata: dict[str, Any] = {}
        """The notebook's own metadata as the extension keeps it: `copilot_nb.review_files`
        and `copilot_nb.review_deleted`."""
        self.closed = threading.Event()
        self.lock = threading.Lock()
        self.ignore_next = 0
        """How many of the next requests to leave unanswered (a page that stopped answering)."""
        self.before_answer: Any = None
        """Called with each request before it is answered (the user typing meanwhile)."""
        self._handled = threading.Event()
        self._opening: str | None = None
        self.comm_id = uuid.uuid4().hex
        self._connection = manager.client()
        # A connection of its own: the kernel routes replies by session id, so two connections
        # with the manager's one would steal each other's messages.
        self._connection.session.session = uuid.uuid4().hex
        self._connection.start_channels()
        # IOPub is a subscription: what the kernel publishes before it is joined is lost (the
        # idle status that says a comm_open was handled, once in CI). Joined before anything.
        self._connection.wait_for_ready(timeout=patient(60))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"front end {path}", daemon=True)
        self._thread.start()

    def open(self, timeout: float = 30) -> None:
        """Open the comm, as index.ts `attach` does, and wait until the kernel has handled it."""
        data = {
            "protocol": 1,
            "path": self.path,
            "server_root": str(self.server_root),
            "client": self.client_id,
            "app": self.app,
        }
        content = {"comm_id": self.comm_id, "target_name": TARGET, "data": data}
        message = self._connection.session.msg("comm_open", content)
        self._opening = message["header"]["msg_id"]
        self._connection.shell_channel.send(message)
        if not self._handled.wait(patient(timeout)):
            raise TimeoutError(
                f"the kernel did not handle the comm_open within {patient(timeout)}s"
            )

    def send_event(self, data: dict[str, Any]) -> None:
        """Say something unasked, as the extension does (`{event: 'review', outcomes}`)."""
        content = {"comm_id": self.comm_id, "data": data}
        self._connection.shell_channel.send(self._connection.session.msg("comm_msg", content))

    def review_of(self, key: str) -> list[dict[str, Any]]:
        """A review list of the notebook's metadata (`review_files`, `review_deleted`)."""
        with self.lock:
            return copy.deepcopy(self.metadata.get("copilot_nb", {}).get(key, []))

    def review_cell(self, cell_id: str, outcome: str, by: str = "button") -> dict[str, Any]:
        """Keep or Undo one cell under review as the extension does (Undo puts back `before`'s
        source only, untrusted and without outputs, or removes a cell the agent inserted), then
        tell the kernel; its review."""
        with self.lock:
            index = self._index(cell_id)
            review = self.cells[index]["metadata"]["copilot_nb"].pop("review")
            if outcome == "undone" and review["before"] is None:
                del self.cells[index]
            elif outcome == "undone":
                self.cells[index] = _undone(self.cells[index], review["before"])
        told = {"turn": review["turn"], "cell_id": cell_id, "kind": review["kind"]}
        self.send_event({"event": "review", "outcomes": [{**told, "outcome": outcome, "by": by}]})
        return review

    def undo_deleted(self, position: int = 0) -> dict[str, Any]:
        """Undo of a deleted cell's placeholder: the cell back after `after_id` (else first)."""
        with self.lock:
            review = self.metadata["copilot_nb"]["review_deleted"].pop(position)
            after = review["after_id"]
            at = self._index(after) + 1 if after else 0
            self.cells.insert(at, _undone(None, review["before"]))
        told = {"turn": review["turn"], "cell_id": review["before"]["id"], "kind": "delete"}
        self.send_event({"event": "review", "outcomes": [{**told, "outcome": "undone"}]})
        return review

    def requests(self, op: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.received if op is None or r.get("op") == op]

    def wait_closed(self, timeout: float = 10) -> bool:
        return self.closed.wait(timeout)

    def cell(self, index: int) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.cells[index])

    def sources(self) -> list[str]:
        with self.lock:
            return [cell["source"] for cell in self.cells]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._connection.stop_channels()

    # --- the kernel's messages -----------------------------------------------------------------

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._connection.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            kind, content = message["msg_type"], message["content"]
            if (
                kind == "status"
                and content.get("execution_state") == "idle"
                and message["parent_header"].get("msg_id") == self._opening
            ):
                self._handled.set()
            if content.get("comm_id") != self.comm_id:
                continue
            if kind == "comm_close":
                self.closed.set()
            elif kind == "comm_msg" and (content.get("data") or {}).get("event") == "kernel":
                self.kernel = content["data"].get("instance")  # the comm's first word
            elif kind == "comm_msg" and "event" in (content.get("data") or {}):
                self.events.append(copy.deepcopy(content["data"]))  # news, not a request
            elif kind == "comm_msg":
                self._answer(content.get("data") or {})

    def _answer(self, data: dict[str, Any]) -> None:
        self.received.append(copy.deepcopy(data))
        if self.ignore_next:
            self.ignore_next -= 1
            return
        if self.before_answer is not None:
            with self.lock:
                self.before_answer(data)
        try:
            with self.lock:
                reply = {"id": data.get("id"), "ok": True, "result": self._handle(data)}
        except RequestError as error:
            reply = {"id": data.get("id"), "ok": False, "code": error.code, "error": str(error)}
        self.replies.append(reply)
        content = {"comm_id": self.comm_id, "data": reply}
        self._connection.shell_channel.send(self._connection.session.msg("comm_msg", content))

    def _handle(self, data: dict[str, Any]) -> dict[str, Any]:
        op = data.get("op")
        if op == "snapshot":
            cells = [{**copy.deepcopy(cell), "running": False} for cell in self.cells]
            return {"path": self.path, "dirty": self.dirty, "cells": cells}
        if op == "apply":
            return self._apply(data.get("changes") or [])
        if op == "set_outputs":
            return self._set_outputs(data)
        if op == "review_files":  # listed in the notebook's metadata, one entry per turn and path
            listed = self.metadata.setdefault("copilot_nb", {}).setdefault("review_files", [])
            for entry in data.get("files") or []:
                same = (entry["turn"], entry["path"])
                listed[:] = [e for e in listed if (e["turn"], e["path"]) != same] + [entry]
            return {"listed": len(listed)}
        raise RequestError(f"unknown op {op!r}", "bad_request")

    def _index(self, cell_id: str | None) -> int:
        for index, cell in enumerate(self.cells):
            if cell["id"] == cell_id:
                return index
        raise RequestError(f"no cell with id {cell_id} in the open notebook", "missing")

    def _apply(self, changes: list[dict[str, Any]]) -> dict[str, Any]:
        """As index.ts: each change checked in order against a dry run of the cells' ids and
        sources (a change may build on an earlier one), then all made; one refusal, none made."""
        dry_run = [{"id": cell["id"], "source": cell["source"]} for cell in self.cells]
        for change in changes:
            _check(dry_run, change)
        for change in changes:
            self._apply_one(change)
        self.dirty = True
        return {"applied": len(changes), "cells": len(self.cells)}

    def _apply_one(self, change: dict[str, Any]) -> None:
        if change["kind"] == "insert":
            at = self._index(change["after_id"]) + 1 if change.get("after_id") else 0
            self.cells.insert(at, _stored(change["cell"]))
            return
        index = self._index(change.get("cell_id"))
        if change["kind"] == "delete":
            del self.cells[index]
            if change.get("review"):  # the placeholder's record, in the same step
                kept = self.metadata.setdefault("copilot_nb", {})
                kept.setdefault("review_deleted", []).append(copy.deepcopy(change["review"]))
            return
        cell = self.cells[index]
        cell["source"] = change.get("source") or ""
        if change.get("cell"):
            cell["metadata"] = copy.deepcopy(change["cell"].get("metadata") or {})
            if cell["cell_type"] == "code":
                cell["outputs"] = copy.deepcopy(change["cell"].get("outputs") or [])
                cell["execution_count"] = change["cell"].get("execution_count")
            return
        cell["metadata"].update(copy.deepcopy(change.get("metadata") or {}))
        if change.get("clear_outputs") and cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None

    def _set_outputs(self, data: dict[str, Any]) -> dict[str, Any]:
        index = self._index(data.get("cell_id"))
        cell = self.cells[index]
        if cell["cell_type"] != "code":
            raise RequestError(f"cell {data['cell_id']} is not a code cell", "bad_request")
        if "expected" in data and cell["source"] != data["expected"]:
            raise RequestError(f"cell {data['cell_id']} changed in the open notebook", "conflict")
        cell["outputs"] = copy.deepcopy(data.get("outputs") or [])
        cell["execution_count"] = data.get("execution_count")
        cell["metadata"].update(copy.deepcopy(data.get("metadata") or {}))
        self.dirty = True
        return {"index": index}


def _check(cells: list[dict[str, str]], change: dict[str, Any]) -> None:
    """Check one change against the dry run of the cells, and make it there."""

    def find(cell_id: Any) -> int:
        for index, cell in enumerate(cells):
            if cell["id"] == cell_id:
                return index
        raise RequestError(f"no cell with id {cell_id} in the open notebook", "missing")

    if change["kind"] == "insert":
        at = find(change["after_id"]) + 1 if change.get("after_id") else 0
        made = change.get("cell") or {}
        source = made.get("source", "")
        cells.insert(at, {"id": made.get("id", ""), "source": "".join(source)})
        return
    index = find(change.get("cell_id"))
    if "expected" in change and cells[index]["source"] != change["expected"]:
        raise RequestError(f"cell {change['cell_id']} changed in the open notebook", "conflict")
    if change["kind"] == "delete":
        del cells[index]
    else:
        cells[index]["source"] = change.get("source") or ""


def _stored(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell as the shared model holds it: its nbformat fields, the source as one string."""
    kept = {key: copy.deepcopy(cell[key]) for key in CELL_KEYS if key in cell}
    source = kept.get("source", "")
    kept["source"] = "".join(source) if isinstance(source, list) else source
    kept.setdefault("metadata", {})
    return kept


def _undone(cell: dict[str, Any] | None, before: dict[str, Any]) -> dict[str, Any]:
    """What the extension's Undo leaves (reviewRecords.ts): `before`'s source in the cell's own
    type, or a deleted cell back as a new one of an allowed type with its id; never trust,
    outputs or metadata from the record."""
    source = _stored(before)["source"]
    if cell is None:
        kind = before.get("cell_type")
        cell = {
            "id": before.get("id"),
            "cell_type": kind if kind in ("code", "markdown") else "raw",
        }
    metadata = {
        k: v for k, v in (cell.get("metadata") or {}).items() if k not in ("copilot_nb", "trusted")
    }
    restored = {"id": cell["id"], "cell_type": cell["cell_type"], "source": source}
    restored["metadata"] = metadata
    if restored["cell_type"] == "code":
        restored["outputs"], restored["execution_count"] = [], None
    return restored


def wait_until(condition: Any, timeout: float = 10, what: str = "the condition") -> None:
    """Poll an observable condition until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not hold within {timeout}s")
        time.sleep(0.02)
