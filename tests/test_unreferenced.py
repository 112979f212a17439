"""Nothing in copilot_nb is defined and left unreferenced: vulture's findings are exactly the
reviewed list of names that are used by name (hooks, fields, what tests use)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = ROOT / "tests" / "data" / "unreferenced_allowed.txt"
OPTIONS = ("--min-confidence", "60", "--exclude", "*/frontend/*")
FINDING = re.compile(r"^(?P<path>[^:]+):\d+: (?P<message>.*) \(\d+% confidence\)$")


def findings() -> set[str]:
    """vulture's report on the package, each finding as `path: message` (no line number)."""
    out = subprocess.run(
        [sys.executable, "-m", "vulture", "copilot_nb", *OPTIONS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 3), out.stderr  # 3: vulture found something
    return {
        f"{m['path']}: {m['message']}" for m in map(FINDING.match, out.stdout.splitlines()) if m
    }


def allowed() -> set[str]:
    lines = ALLOWED.read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def test_every_unreferenced_definition_is_a_reviewed_one() -> None:
    found, known = findings(), allowed()
    assert not found - known, f"defined but never referenced: {sorted(found - known)}"
    assert not known - found, (
        f"no longer reported, drop from {ALLOWED.name}: {sorted(known - found)}"
    )
