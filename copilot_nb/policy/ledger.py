"""The budget ledger: tokens counted per user and team and period, in files the policy places.

One JSON file per ledger key (`user-alice.json`, `team-ds.json`) holds the period it counts and
the tokens used in it; a new period starts the count again. Each change is made under an
exclusive lock of the folder's `.lock` file and written whole to a temporary file that replaces
the old one, so two kernels adding at once both count and a reader never sees half a file.

Where it is decides who can change it: in the policy's `ledger` folder (a place the
administrator makes, e.g. group-writable by the hub's users and owned by root) a user's kernel
must still write its own counts, so a user who can run code can also edit them; the ledger
keeps honest users within their budget, and the gateway's counts (LiteLLM's) are the ones a
user cannot reach. Without a `ledger` in the policy the counts are kept in the user's own data
folder, which the user owns outright.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = ".lock"


def default_folder() -> Path:
    """The user's own data folder's `copilot_nb/ledger` (when the policy names no `ledger`)."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "copilot_nb" / "ledger"


class BudgetLedger:
    """Token counts per key and period, in one folder; safe across processes on one host."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def used(self, key: str, period: str) -> int:
        """Tokens counted for `key` in `period` (0 for another period, or none yet)."""
        return _count(_read(self._file(key)), period)

    def add(self, counts: dict[str, str], tokens: int) -> None:
        """Add `tokens` to each key's count for its period (`counts`: key -> period)."""
        if tokens <= 0 or not counts:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._locked():
            for key, period in counts.items():
                path = self._file(key)
                entry = _read(path)
                used = _count(entry, period)
                _write(path, {"key": key, "period": period, "tokens": used + tokens})

    def _file(self, key: str) -> Path:
        return self.folder / (re.sub(r"[^A-Za-z0-9_.@-]", "-", key.replace(":", "-")) + ".json")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.folder / LOCK_NAME, "a+b") as handle:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - Windows: one writer per file is assumed
                yield
                return
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _count(entry: dict[str, object], period: str) -> int:
    """The tokens an entry counts in `period` (0: another period, or not a count)."""
    tokens = entry.get("tokens")
    return tokens if entry.get("period") == period and isinstance(tokens, int) else 0


def _read(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, entry: dict[str, object]) -> None:
    """Written whole, then moved into place (readers see the old count or the new one)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(entry, out)
        os.chmod(temporary, 0o660)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
