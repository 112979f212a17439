"""The review ledger: the agent's changes waiting for the user's Keep or Undo, and what they chose.

In review mode (`approve_edit = "review"` with a live notebook attached) the agent's cell changes
apply at once and carry their review in the cell's metadata (`notebook/review.py`), so a reload
shows it again; its file edits apply at once too, checkpointed as every write is, and are listed
in the notebook for review. The front end keeps and undoes cells itself (it holds each cell's
`before`) and tells the kernel what the user chose; a file it asks the kernel to undo, which puts
it back from the turn's checkpoint unless it changed since. The ledger keeps the outcomes until a
turn's context block has told the model, so the model does not redo what the user undid; and
`%copilot undo` leaves out the cells the user already undid.

Everything here is data the front end sent: malformed entries are left out, never raised.
"""

from __future__ import annotations

import logging
import threading
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...workspace.checkpoints import Checkpoints
from ...workspace.snapshots import Turn
from .proof import sign_file

OUTCOMES = ("kept", "undone", "refused")
"""What the user did with one change (`refused`: its Undo could not be made, with why)."""
REVIEW_TURN_KEY = "review_turn"
"""The key an open notebook's undo change carries in the checkpoint (never sent)."""
MAX_WHY = 300
"""Characters of a refusal's reason kept for the model."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One change as the user reviewed it: a cell (by id) or a file (by path)."""

    turn: str
    target: str
    kind: str
    outcome: str
    why: str = ""
    by: str = ""
    file: bool = False

    def describe(self) -> str:
        """`cell 3f2a (edit)`, `file notes.txt (create)`, with why an undo was refused."""
        what = f"{'file' if self.file else 'cell'} {self.target} ({self.kind or 'change'})"
        return f"{what}: {self.why}" if self.why else what


@dataclass(kw_only=True, eq=False)
class FileReview:
    """A file change listed for review: the checkpoint turn that can put it back."""

    turn: str
    path: str
    kind: str
    diff: str
    checkpoints: Checkpoints
    checkpoint: weakref.ReferenceType[Turn]
    """Weak: a turn the checkpoints forget (only the last 20 are kept) frees its bytes."""
    root: Path

    def wire(self) -> dict[str, str]:
        """The entry as the `review_files` request sends it, signed with the user's key."""
        return sign_file(
            {"turn": self.turn, "path": self.path, "diff": self.diff, "kind": self.kind}
        )

    def paths(self, checkpoint: Turn) -> list[Path]:
        """The checkpointed paths this change touched: the file, a moved file's both ends and
        what was under them, and folders the change created for it."""
        names = [self.path]
        if self.kind == "move":
            names = [line[len("rename from ") :] for line in self.diff.splitlines()[:1]] + names
        targets = [self.root / name for name in names]
        return [
            path
            for path in checkpoint.before
            if any(path == t or t in path.parents or path in t.parents for t in targets)
        ]


class ReviewBook:
    """The kernel's review ledger (one per kernel, kept by the live channel)."""

    def __init__(self) -> None:
        self.turn = ""
        """The id of the review turn under way ('' when the turn does not review)."""
        self.outcomes: list[Outcome] = []
        self.reported = 0
        """Outcomes before this index were told to the model by an earlier turn."""
        self._shown = 0
        self._begun = False
        self.files: dict[tuple[str, str], FileReview] = {}
        self._undo: dict[tuple[str, str], list[Callable[[], object]]] = {}
        self._lock = threading.Lock()

    # --- turns ---------------------------------------------------------------------------------

    def begin(self, reviewing: bool) -> str:
        """A turn starts: a new review turn id when it reviews ('' otherwise)."""
        self.turn = uuid.uuid4().hex[:12] if reviewing else ""
        self._shown = self.reported
        self._begun = True
        return self.turn

    def end(self) -> None:
        """The turn is over: what its context block told the model is not told again."""
        if self._begun:
            self.reported = max(self.reported, self._shown)
        self.turn, self._begun = "", False

    def unreported(self) -> list[Outcome]:
        """The outcomes the model has not been told yet (the context block shows them)."""
        with self._lock:
            self._shown = len(self.outcomes)
            return self.outcomes[self.reported :]

    # --- what the front end says ---------------------------------------------------------------

    def record(self, data: dict[str, Any]) -> int:
        """A `review` event's outcomes, each checked; how many were recorded."""
        entries = data.get("outcomes")
        found = []
        for entry in entries if isinstance(entries, list) else []:
            outcome = _outcome(entry)
            if outcome is None:
                _log.debug("review outcome left out: %r", entry)
            else:
                found.append(outcome)
        with self._lock:
            self.outcomes.extend(found)
            steps: list[Callable[[], object]] = []
            for outcome in found:
                if outcome.outcome != "refused" and not outcome.file:
                    taken = self._undo.pop((outcome.turn, outcome.target), [])
                    steps += reversed(taken) if outcome.outcome == "undone" else []
        for step in steps:  # the kernel's part of an Undo, once the cell's is done
            step()
        return len(found)

    def on_undo(self, turn: str, cell_id: str, step: Callable[[], object]) -> None:
        """Also do `step` when the user undoes this cell's change in review (put back the
        kernel's variables a run of it changed); a Keep forgets it."""
        with self._lock:
            self._undo.setdefault((turn, cell_id), []).append(step)

    def undone_cells(self) -> set[tuple[str, str]]:
        """(turn, cell id) of every cell change the user undid in review."""
        with self._lock:
            return {
                (o.turn, o.target) for o in self.outcomes if o.outcome == "undone" and not o.file
            }

    def skip_undone(self, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """An open notebook's undo changes without those the user already undid in review
        (they would no longer match), each without its review turn key."""
        undone = self.undone_cells()
        kept = []
        for change in changes:
            turn = change.get(REVIEW_TURN_KEY, "")
            cell = change.get("cell_id") or (change.get("cell") or {}).get("id")
            if turn and (turn, cell) in undone:
                continue
            kept.append({k: v for k, v in change.items() if k != REVIEW_TURN_KEY})
        return kept

    # --- files ---------------------------------------------------------------------------------

    def list_file(
        self, *, path: str, diff: str, checkpoints: Checkpoints, root: Path
    ) -> FileReview | None:
        """A file the review turn changed: its entry for the notebook (None outside review, or
        when the turn's checkpoint holds no such file: a live notebook's cells, which review in
        place). A second change of it in one turn adds to its diff."""
        if not self.turn or not checkpoints.turns:
            return None
        checkpoint = checkpoints.turns[-1]
        before = checkpoint.before.get(root / path)
        if before is None:
            return None
        key = (self.turn, path)
        with self._lock:
            entry = self.files.get(key)
            if entry is not None and entry.checkpoint() is checkpoint:
                entry.diff += diff
                return entry
            if diff.startswith("rename from "):
                kind = "move"
            elif diff.rstrip("\n").endswith("+++ /dev/null"):
                kind = "delete"
            elif before.kind == "missing":
                kind = "create"
            else:
                kind = "edit"
            entry = FileReview(
                turn=self.turn,
                path=path,
                kind=kind,
                diff=diff,
                checkpoints=checkpoints,
                checkpoint=weakref.ref(checkpoint),
                root=root,
            )
            self.files[key] = entry
            return entry

    def file_outcome(self, turn: str, path: str, outcome: str) -> tuple[bool, str]:
        """The user's Keep or Undo of a listed file: (done, why not). An undo puts the file back
        from the turn's checkpoint, refused when the file changed since the agent wrote it."""
        with self._lock:
            entry = self.files.get((turn, path))
        if entry is None:
            return False, (
                f"{path} is not waiting for review in this kernel (it was reviewed already, or "
                "the kernel restarted since the change, and its checkpoint with it)"
            )
        if outcome == "keep":
            self._settle(entry, "kept")
            return True, ""
        if outcome != "undo":
            return False, f"unknown outcome {outcome!r}: it is 'undo' or 'keep'"
        checkpoint = entry.checkpoint()
        if checkpoint is None:
            why = entry.checkpoints.gone()
        else:
            why = entry.checkpoints.take_back(checkpoint, entry.paths(checkpoint))
        self._settle(entry, "refused" if why else "undone", why)
        return not why, why

    def _settle(self, entry: FileReview, outcome: str, why: str = "") -> None:
        with self._lock:
            if outcome != "refused":
                self.files.pop((entry.turn, entry.path), None)
            self.outcomes.append(
                Outcome(
                    turn=entry.turn,
                    target=entry.path,
                    kind=entry.kind,
                    outcome=outcome,
                    why=why[:MAX_WHY],
                    by="button",
                    file=True,
                )
            )


def _outcome(entry: Any) -> Outcome | None:
    """One outcome as the front end sent it, or None when it does not have the right shape."""
    if not isinstance(entry, dict):
        return None
    turn, cell, outcome = entry.get("turn"), entry.get("cell_id"), entry.get("outcome")
    if not (isinstance(turn, str) and isinstance(cell, str) and cell and outcome in OUTCOMES):
        return None
    why, by, kind = entry.get("why"), entry.get("by"), entry.get("kind")
    return Outcome(
        turn=turn,
        target=cell,
        kind=kind if isinstance(kind, str) else "",
        outcome=outcome,
        why=why[:MAX_WHY] if isinstance(why, str) else "",
        by=by if isinstance(by, str) else "",
    )
