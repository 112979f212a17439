"""The scan every test's saved conversations pass (see `conftest.py`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from copilot_nb.text import SECRET_VALUE


def scan_saved(folders: Iterable[Path]) -> list[Path]:
    """Fail on a saved conversation holding a secret format or a home path; the files scanned."""
    home = os.path.expanduser("~").rstrip(os.sep) + os.sep
    scanned = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in folder.rglob("*.copilot-chat.jsonl"):
            if path.is_symlink() or not path.is_file():  # planted by a test: copilot_nb skips it
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found = SECRET_VALUE.search(text)
            assert found is None, f"{path.name} holds a secret: {found.group()[:12]}…"
            if len(home) > 2:
                assert home not in text, f"{path.name} holds a path in the home folder"
            scanned.append(path)
    return scanned
