"""Checkpoints: what every path looked like before the agent changed it, so a turn can be undone.

The workspace records a path's state (bytes and permission bits, a symlink's target, a folder,
or "did not exist") the first time a turn changes it, and a fingerprint of what the agent left
there. `undo()` puts the last turn that changed something back byte for byte, turn by turn; it
refuses when a file was changed on disk after the agent's write, or a kernel variable after its
run (unless forced), so a user's own later edit is never lost. Everything is kept in memory and bounded: the last `max_turns` turns,
and files up to `max_file_bytes` (a bigger file's change is noted as one undo cannot restore).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import SandboxError
from ..text import BINARY_CHANGE, cell_diff, human_bytes, unified_diff
from .restore import Action, RestoredPath, restore_turn
from .snapshots import OtherChange, PathState, Seen, Turn, capture, seen

__all__ = ["Checkpoints"]

MAX_TURNS = 20
MAX_FILE_BYTES = 20 * 1024 * 1024
"""A file bigger than this is not kept: undo cannot restore a change to it (and says so)."""
MAX_TURN_BYTES = 100 * 1024 * 1024
MAX_TOTAL_BYTES = 250 * 1024 * 1024
"""Older turns are forgotten when all turns together keep more than this."""


CellRestorer = Callable[[str, list[dict[str, Any]]], tuple[Action, str]]
"""Takes back changes made in an open notebook: (notebook, changes) -> (action, detail)."""


class Change:
    """One workspace operation in progress: what it wrote, and notes for the tool's result."""

    def __init__(self) -> None:
        self.written: dict[Path, bytes] = {}
        self.notes: list[str] = []


class Checkpoints:
    """The turns of one workspace, newest last; safe to use from worker threads."""

    def __init__(
        self,
        root: Path,
        *,
        max_turns: int = MAX_TURNS,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_turn_bytes: int = MAX_TURN_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.max_turn_bytes = max_turn_bytes
        self.max_total_bytes = max_total_bytes
        self.turns: collections.deque[Turn] = collections.deque(maxlen=max_turns)
        self._lock = threading.RLock()

    def begin_turn(self, label: str) -> Turn:
        """Start a turn; an empty current turn is reused, so only turns with changes are kept."""
        with self._lock:
            if self.turns and not self.turns[-1].changed:
                self.turns[-1].label = label
            else:
                self.turns.append(Turn(label=label))
            while len(self.turns) > 1 and sum(t.kept_bytes for t in self.turns) > (
                self.max_total_bytes
            ):
                self.turns.popleft()
            return self.turns[-1]

    @contextlib.contextmanager
    def record(
        self, paths: Iterable[Path], *, moves: Mapping[Path, Path] | None = None
    ) -> Iterator[Change]:
        """Capture `paths` before the operation inside the block, and what it left after it.

        `moves` maps a source to where the operation moves it, so a file too big to keep can be
        moved back. What is on disk afterwards is recorded even when the block fails half-way.
        """
        change = Change()
        with self._lock:
            if not self.turns:
                self.turns.append(Turn(label="(changes made outside a turn)"))
            turn = self.turns[-1]
            touched = list(dict.fromkeys(paths))
            fresh = {p for p in touched if p not in turn.before}
            for path in touched:
                if path in fresh:
                    turn.before[path] = self._capture(turn, path, (moves or {}).get(path), change)
            try:
                yield change
            finally:
                self._settle(turn, touched, fresh, change, moves or {})

    def record_cells(self, notebook: str, undo: list[dict[str, Any]]) -> None:
        """Keep how to take back a change made in an open notebook (it has no file to keep)."""
        with self._lock:
            if not self.turns:
                self.turns.append(Turn(label="(changes made outside a turn)"))
            self.turns[-1].cells.append((notebook, undo))

    def hold(self) -> Turn:
        """The current turn, as the one a change still to come belongs to: a run that goes on
        after its turn records its variables there (`record_other(..., into=)`), not in
        whichever turn is current when it ends, and a later turn never reuses it."""
        with self._lock:
            if not self.turns:
                self.turns.append(Turn(label="(changes made outside a turn)"))
            turn = self.turns[-1]
            turn.awaited += 1
            return turn

    def record_other(self, change: OtherChange, *, into: Turn | None = None) -> None:
        """Keep how to take back a change outside the files (variables a run changed), in the
        turn `hold` gave (the current one without it)."""
        with self._lock:
            if into is not None:
                into.awaited = max(0, into.awaited - 1)
                into.others.append(change)
                return
            if not self.turns:
                self.turns.append(Turn(label="(changes made outside a turn)"))
            self.turns[-1].others.append(change)

    def _capture(self, turn: Turn, path: Path, moved_to: Path | None, change: Change) -> PathState:
        state = capture(path, keep_data=False)
        if state.kind != "file" or state.key is None:
            return state
        size = state.key[0]
        why = ""
        if size > self.max_file_bytes:
            why = f"over the {human_bytes(self.max_file_bytes)} checkpoint limit"
        elif turn.kept_bytes + size > self.max_turn_bytes:
            why = f"more than this turn's checkpoints can hold ({human_bytes(self.max_turn_bytes)})"
        else:
            try:
                kept = capture(path)
            except OSError as exc:  # e.g. a file we may write but not read
                why = f"not readable ({exc.strerror}), so it could not be checkpointed"
            else:
                turn.kept_bytes += len(kept.data or b"")
                return kept
        if moved_to is None:
            change.notes.append(
                f"{self._rel(path)} ({human_bytes(size)}) is {why}; undo cannot restore this change"
            )
        return PathState(kind="file", mode=state.mode, key=state.key, moved_to=moved_to)

    def _settle(
        self,
        turn: Turn,
        touched: list[Path],
        fresh: set[Path],
        change: Change,
        moves: Mapping[Path, Path],
    ) -> None:
        """Fingerprint what the operation left; forget paths it did not change after all."""
        sources = {dst: src for src, dst in moves.items()}
        for path in touched:
            data = change.written.get(path)
            if data is None and path in sources and sources[path] in fresh:
                data = turn.before[sources[path]].data  # a move keeps the bytes it found
            now = seen(path, data)
            before = turn.before[path]
            if path in fresh and _same(before, now):
                turn.kept_bytes -= len(before.data or b"")
                del turn.before[path]
            else:
                turn.after[path] = now

    # --- undo ----------------------------------------------------------------------------------

    def undo(self, *, force: bool = False, cells: CellRestorer | None = None) -> list[RestoredPath]:
        """Put back the last turn that changed something; [] when there is none.

        Its changes in open notebooks go to `cells(notebook, changes)`, which takes them back
        there and says how it went (without it they are reported as not restored)."""
        with self._lock:
            changed_turns = [t for t in self.turns if t.changed]
            if not changed_turns:
                return []
            return self.undo_turn(changed_turns[-1], force=force, cells=cells)

    def undo_turn(
        self, turn: Turn, *, force: bool = False, cells: CellRestorer | None = None
    ) -> list[RestoredPath]:
        """Put back this one turn, as `undo()` puts back the last (a code block's Run has an
        Undo of its own); [] when it is gone (undone already, or forgotten)."""
        with self._lock:
            if turn not in self.turns:
                return []
            if not force:
                self._refuse_if_changed(turn)
            restored = restore_turn(turn, self._rel) + _restore_cells(turn, cells)
            restored += [_take_back(turn, other) for other in reversed(turn.others)]
            self.turns.remove(turn)
            return restored

    def _refuse_if_changed(self, turn: Turn) -> None:
        """SandboxError, undoing nothing, when a file or a kernel variable of the turn changed
        after the agent left it: undoing would lose that change."""
        changed = [p for p in sorted(turn.before) if self._changed_since(turn, p)]
        names = [name for other in turn.others for name in other.changed_since()]
        parts = []
        if changed:
            files = ", ".join(self._rel(p) for p in changed[:5])
            more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
            parts.append(f"{files}{more} changed on disk after the agent's write")
        if names:
            shown = ", ".join(dict.fromkeys(names))
            parts.append(f"{shown} changed in the kernel after the agent's run")
        if parts:
            raise SandboxError(
                f"cannot undo {turn.label!r}: {'; '.join(parts)}; undoing would lose that "
                "change, so nothing was undone. Undo with force (`%copilot undo --force`, "
                "`undo(force=True)`) to restore the agent's starting point anyway"
            )

    def take_back(self, turn: Turn, paths: Iterable[Path]) -> str:
        """Put some paths of one turn back as they were before it (a file the user undid in
        review); '' once done, else why not. Refused, changing nothing, when the turn was undone
        or forgotten, or a path changed after the agent's write or was too big to keep. The paths
        put back leave the turn, so `undo()` of it later restores the rest."""
        with self._lock:
            if turn not in self.turns:
                return self.gone()
            chosen = sorted(p for p in paths if p in turn.before)
            if not chosen:
                return "it was put back already"
            changed = [p for p in chosen if self._changed_since(turn, p)]
            if changed:
                names = ", ".join(self._rel(p) for p in changed[:5])
                return (
                    f"{names} changed since the agent wrote it; undoing would lose that change "
                    "(edit it back by hand, or use %copilot undo --force for the whole turn)"
                )
            big = [p for p in chosen if _not_kept(turn.before[p])]
            if big:
                return f"{self._rel(big[0])} was too big to checkpoint; its earlier content was not kept"
            restore_turn(
                Turn(label=turn.label, before={p: turn.before[p] for p in chosen}), self._rel
            )
            for path in chosen:
                turn.kept_bytes -= len(turn.before.pop(path).data or b"")
                turn.after.pop(path, None)
            return ""

    def gone(self) -> str:
        """Why a turn's checkpoint can no longer put anything back."""
        return (
            "its checkpoint is gone: the turn was undone with %copilot undo, or is older than "
            f"the last {self.turns.maxlen} turns that are kept"
        )

    def _changed_since(self, turn: Turn, path: Path) -> bool:
        after = turn.after.get(path)
        if after is None:
            return False
        now = seen(path)
        if now.kind != after.kind or now.target != after.target:
            return True
        if now.kind != "file" or now.key == after.key:
            return False
        if after.digest is None:
            return True
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest() != after.digest
        except OSError:
            return True

    # --- diff ----------------------------------------------------------------------------------

    def last_diff(self) -> tuple[str, str]:
        """(label, unified diff) of the last turn that changed something: its files against the
        disk now, then its cells in open notebooks, read from the changes that take them back."""
        with self._lock:
            turns = [t for t in self.turns if t.changed]
            if not turns:
                return "", ""
            turn = turns[-1]
            parts = [self._diff_one(path, turn.before[path]) for path in sorted(turn.before)]
            parts += cell_diffs(turn.cells)
        return turn.label, "".join(parts)

    def _diff_one(self, path: Path, before: PathState) -> str:
        name = self._rel(path)
        now = capture(path, keep_data=_is_small_file(path, self.max_file_bytes))
        if before.kind == "dir" or now.kind == "dir":
            return ""
        old, new = _text(before), _text(now)
        if old is None or new is None:
            if before.kind == now.kind and before.data == now.data and before.data is not None:
                return ""
            return f"{BINARY_CHANGE}{name} changed (no text diff)\n"
        if old == new and before.kind == now.kind:
            return ""
        return unified_diff(
            None if before.kind == "missing" else old,
            None if now.kind == "missing" else new,
            name,
        )

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(path)


CELL_NUMBER = "number"
"""In a cell change's inverse: the cell's number as the notebook showed it then (from 1), so
`%copilot diff` names it as the user knows it; the front end applying the inverse ignores it."""


def cell_diffs(cells: Iterable[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    """One diff per cell a turn changed in open notebooks, from its first source to its last,
    rebuilt from the inverse changes: an inserted cell is undone by a delete (`expected`: the
    source it got), a deleted one by an insert (`cell`: the cell as it was), an edit by a
    `set_source` (`source`: before, `expected`: after). Each is named as the user knows the
    cell, `sales.ipynb, cell 4`, by the number the notebook showed at its last change."""
    sides: dict[tuple[str, str], list[str | None]] = {}
    numbers: dict[tuple[str, str], int] = {}
    for notebook, undo in cells:
        for change in undo:
            kind, cell = change.get("kind"), change.get("cell") or {}
            if kind == "delete":
                cell_id, before, after = change.get("cell_id"), None, change.get("expected", "")
            elif kind == "insert":
                cell_id, before, after = cell.get("id"), _source(cell), None
            elif kind == "set_source":
                cell_id = change.get("cell_id")
                before, after = change.get("source", ""), change.get("expected", "")
            else:
                continue
            side = sides.setdefault((notebook, str(cell_id)), [before, after])
            side[1] = after  # the first change gave the cell's source before the turn
            if isinstance(change.get(CELL_NUMBER), int):
                numbers[(notebook, str(cell_id))] = change[CELL_NUMBER]
    return [
        cell_diff(notebook, cell_id, before, after, name=_cell_name(notebook, cell_id, numbers))
        for (notebook, cell_id), (before, after) in sides.items()
        if before != after
    ]


def _cell_name(notebook: str, cell_id: str, numbers: Mapping[tuple[str, str], int]) -> str:
    """`sales.ipynb, cell 4`; by its id only where no number was kept."""
    number = numbers.get((notebook, cell_id))
    return f"{notebook}, cell {number}" if number else f"{notebook}, cell id {cell_id}"


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _restore_cells(turn: Turn, cells: CellRestorer | None) -> list[RestoredPath]:
    """Take back a turn's changes in open notebooks, newest first, one notebook at a time."""
    changes: dict[str, list[dict[str, Any]]] = {}
    for notebook, undo in reversed(turn.cells):
        changes.setdefault(notebook, []).extend(undo)
    done = []
    for notebook, undo in changes.items():
        action: Action = "not restored"
        detail = "its cells were changed in the open notebook"
        if cells is not None:
            action, detail = cells(notebook, undo)
        done.append(RestoredPath(path=notebook, action=action, detail=detail, turn=turn.label))
    return done


def _take_back(turn: Turn, other: OtherChange) -> RestoredPath:
    what, done, detail = other.take_back()
    action: Action = "restored" if done else "not restored"
    return RestoredPath(path=what, action=action, detail=detail, turn=turn.label)


def _same(before: PathState, now: Seen) -> bool:
    """Whether a path is provably as it was (an unchanged stat key for files)."""
    if before.kind != now.kind:
        return False
    if before.kind == "file":
        return before.key is not None and before.key == now.key
    return before.kind != "link" or before.target == now.target


def _is_small_file(path: Path, limit: int) -> bool:
    try:
        return os.lstat(path).st_size <= limit
    except OSError:
        return False


def _text(state: PathState) -> str | None:
    """A state as diffable text; None for binary files and files whose bytes were not kept."""
    if state.kind == "missing":
        return ""
    if state.kind == "link":
        return f"symlink -> {state.target}\n"
    if state.data is None or b"\x00" in state.data[:8192]:
        return None
    return state.data.decode("utf-8", errors="replace")


def _not_kept(state: PathState) -> bool:
    """A file whose bytes were too big to keep, and that no move can bring back."""
    return state.kind == "file" and state.data is None and state.moved_to is None
