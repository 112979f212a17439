"""`@` completion in the chat panel: how long a keystroke waits for its candidates.

A 10,000-file workspace (100 packages of 50 modules and 50 data files): the first query walks
it (in a thread, with the secret filter) and ranks; every later keystroke ranks the kept listing.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb.jupyter.panel.mentions import Completer  # noqa: E402
from copilot_nb.tools.context import ToolContext  # noqa: E402
from copilot_nb.workspace.workspace import Workspace  # noqa: E402

QUERIES = ("p", "pk", "pkg4", "pkg42/", "pkg42/sub/da", "data7", "mod", "zz")
FIRST_TARGET, KEYSTROKE_TARGET = 0.5, 0.05


def make_workspace(root: Path) -> None:
    for i in range(100):
        (root / f"pkg{i}" / "sub").mkdir(parents=True)
        for j in range(50):
            (root / f"pkg{i}" / f"mod{j}.py").write_text("x = 1\n")
            (root / f"pkg{i}" / "sub" / f"data{j}.csv").write_text("a,b\n")


async def measure(root: Path) -> tuple[list[float], list[float]]:
    firsts, keystrokes = [], []
    for _ in range(5):
        completer = Completer(lambda: ToolContext(workspace=Workspace(root)))
        began = time.perf_counter()
        await completer.candidates("d")
        firsts.append(time.perf_counter() - began)
        for query in QUERIES:
            began = time.perf_counter()
            await completer.candidates(query)
            keystrokes.append(time.perf_counter() - began)
    return firsts, keystrokes


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_workspace(root)
        firsts, keystrokes = asyncio.run(measure(root))
    print("\n@ completion in the chat panel, 10,000 files (5 rounds)")
    print(f"{'query':<28}{'median ms':>12}{'worst ms':>12}{'target ms':>12}")
    for name, values, target in (
        ("first (walk + rank)", firsts, FIRST_TARGET),
        ("each later keystroke", keystrokes, KEYSTROKE_TARGET),
    ):
        print(
            f"{name:<28}{statistics.median(values) * 1e3:>12.1f}"
            f"{max(values) * 1e3:>12.1f}{target * 1e3:>12.0f}"
        )


if __name__ == "__main__":
    main()
