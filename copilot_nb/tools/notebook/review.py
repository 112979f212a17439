"""A cell's review: what an agent's change in review mode leaves in the cell's metadata.

Beside the stamp (`metadata.copilot_nb = {change, at, model}`), a cell the agent changed,
inserted or ran in review mode carries `review = {turn, kind, before, ran}` (a run's also
`kernel`, what its Undo puts back in the kernel, and `instance`, the kernel process that holds
it): `before` is the cell
as it was before the agent first touched it (nbformat JSON; null for a cell the agent inserted),
so the front end's Undo puts it back exactly, and a reload or a reopened notebook shows the
review again. Each record is signed with the user's key (`tools/review_proof.py`): the front
end offers only records this user's kernel vouches for. Later changes to a cell still under
review keep that first `before`; a change made outside review mode keeps a pending review as it
is. A deleted cell's review travels with the `delete` change (the front end keeps it in the
notebook's metadata, `review_deleted`).
"""

from __future__ import annotations

import copy
from typing import Any

from ..context import ToolContext
from ..review.ledger import REVIEW_TURN_KEY
from ..review.proof import sign_cell, sign_deleted
from .store import STAMP_KEY, Opened

REVIEW_KEY = "review"
BEFORE_KEYS = ("id", "cell_type", "source", "metadata", "attachments")
CODE_KEYS = ("outputs", "execution_count")


def review_turn(ctx: ToolContext, opened: Opened) -> str:
    """The review turn under way for a change to this notebook ('' unless it is open live and
    the turn reviews)."""
    if opened.view is None or ctx.live is None:
        return ""
    return ctx.live.review.turn


def before_json(cell: Any) -> dict[str, Any]:
    """The cell as nbformat JSON, without its own pending review (what Undo restores)."""
    node = copy.deepcopy(dict(cell))
    keys = BEFORE_KEYS + (CODE_KEYS if node.get("cell_type") == "code" else ())
    before = {key: node[key] for key in keys if key in node}
    source = before.get("source", "")
    before["source"] = "".join(source) if isinstance(source, list) else str(source)
    metadata = dict(before.get("metadata") or {})
    stamp = metadata.get(STAMP_KEY)
    if isinstance(stamp, dict) and REVIEW_KEY in stamp:
        stamp = {k: v for k, v in stamp.items() if k != REVIEW_KEY}
        if stamp:
            metadata[STAMP_KEY] = stamp
        else:
            del metadata[STAMP_KEY]
    before["metadata"] = metadata
    return before


def pending(cell: Any) -> dict[str, Any] | None:
    """The review a cell still carries, if any."""
    stamp = (cell.get("metadata") or {}).get(STAMP_KEY)
    found = stamp.get(REVIEW_KEY) if isinstance(stamp, dict) else None
    return dict(found) if isinstance(found, dict) else None


def review_of(
    cell: Any, turn: str, kind: str, *, ran: bool = False, kernel: str = "", instance: str = ""
) -> dict[str, Any] | None:
    """The review a change leaves on `cell` (as it is before the change): a pending one kept
    with its first `before`, else a new one when the turn reviews, else None. `kernel` says
    what its Undo puts back in the kernel (the variables kept before a run), which only the
    kernel process `instance` holds: after a restart the page says they are gone."""
    old = pending(cell)
    if old is not None:
        if kernel:
            old["kernel"] = kernel
            old["instance"] = instance
        if turn:
            old["turn"] = turn
        if old.get("kind") == "run" and kind == "edit":
            old["kind"] = "edit"
        old["ran"] = bool(old.get("ran")) or ran
        return sign_cell(str(cell.get("id", "")), old)
    if not turn:
        return None
    before = None if kind == "insert" else before_json(cell)
    review = {"turn": turn, "kind": kind, "before": before, "ran": ran}
    if kernel:
        review["kernel"] = kernel
        review["instance"] = instance
    return sign_cell(str(cell.get("id", "")), review)


def marked(marks: dict[str, Any], review: dict[str, Any] | None) -> dict[str, Any]:
    """The stamp with the review beside it."""
    if review is not None:
        marks[STAMP_KEY][REVIEW_KEY] = review
    return marks


def deleted(cell: Any, turn: str, after_id: str | None) -> dict[str, Any] | None:
    """What a `delete` change carries for review: the cell as it was before the agent touched it
    and where it stood; None when there is nothing to review (outside review, or a cell the
    agent itself inserted and never showed as the user's)."""
    old = pending(cell)
    if old is not None and old.get("kind") == "insert":
        return None
    if old is None and not turn:
        return None
    before = old.get("before") if old is not None else None
    entry = {
        "turn": turn or (old or {}).get("turn", ""),
        "before": before if isinstance(before, dict) else before_json(cell),
        "after_id": after_id,
    }
    return sign_deleted(entry)


def tagged(undo: dict[str, Any], turn: str) -> dict[str, Any]:
    """An undo change marked with its review turn, so `%copilot undo` can leave it out once the
    user undid the change in review (the key is taken off before it is sent)."""
    return {**undo, REVIEW_TURN_KEY: turn} if turn else undo
