"""search_text on each engine against the tool it stands in for, on two trees.

"10,000 small files" is bench_loop's tree (~1.7 KB each); "40 big files" is 40 logs with code
in them, 2-5 MB each (~140 MB), with 80 matching lines. Through ripgrep (the default when rg
is installed: it reads only the big files) against `rg -n` run directly (target: within 1.2x),
and on the Python engine (`COPILOT_NB_RIPGREP=0`) against `grep -rnE` (target: within 1.5x).
The runs alternate, so a busy machine slows each side alike; the table shows medians.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_loop import REGEX, make_tree
from copilot_nb.tools.search.ripgrep import ENV, find_ripgrep
from copilot_nb.tools.search.tools import search_tools
from copilot_nb.workspace.workspace import Workspace

REPEATS = 11
RG_TARGET = 1.2
GREP_TARGET = 1.5
BIG_FILES = 40
WORDS = [
    "request",
    "response",
    "handler",
    "session",
    "user",
    "token",
    "cache",
    "index",
    "value",
    "error",
    "retry",
    "worker",
]


def make_big_tree(root: Path) -> None:
    """40 files of 2-5 MB: log lines with a Python-like line every third, two matches each."""
    rnd = random.Random(40)
    for number in range(BIG_FILES):
        size, lines, total = rnd.randint(2 << 20, 5 << 20), [], 0
        while total < size:
            k = len(lines)
            word, other = rnd.choice(WORDS), rnd.choice(WORDS)
            if k % 3:
                line = f"2024-05-{k % 28 + 1:02d}T12:{k % 60:02d}:00Z INFO {word}.{other} id={k}"
                line += f" took={k % 997}ms status=ok"
            else:
                line = f"    def process_{word}_event(self, event, state={k % 13}): return state"
            lines.append(line)
            total += len(line) + 1
        for hit in (len(lines) // 3, 2 * len(lines) // 3):
            lines[hit] = f"def handle_{rnd.choice(('click', 'key'))}_event(event): pass"
        folder = root / "src" / f"service_{number % 8}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"server_{number:02d}.log").write_text("\n".join(lines) + "\n")


CORPORA: dict[str, Callable[[Path], None]] = {
    "10,000 small files": make_tree,
    f"{BIG_FILES} big files": make_big_tree,
}
ARGUMENTS = {"regex": REGEX, "glob": "src/**"}


def command_seconds(root: Path, command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=root, capture_output=True, check=False)
    return time.perf_counter() - started


async def tool_seconds(root: Path, engine: str) -> tuple[float, str]:
    os.environ[ENV] = engine
    tools = search_tools(Workspace(root))
    started = time.perf_counter()
    out = await tools.call_tool("search_text", ARGUMENTS)
    elapsed = time.perf_counter() - started
    assert not out.is_error, out.content
    return elapsed, out.content


async def measure(root: Path, rg: str | None) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"python": [], "grep": [], "ripgrep": [], "rg": []}
    _, python = await tool_seconds(root, "0")  # warm up the caches; both engines agree
    if rg is not None:
        _, through_rg = await tool_seconds(root, rg)
        assert through_rg == python, "the engines disagree"
    for _ in range(REPEATS):
        times["python"].append((await tool_seconds(root, "0"))[0])
        times["grep"].append(command_seconds(root, ["grep", "-rnE", REGEX, "src"]))
        if rg is not None:
            times["ripgrep"].append((await tool_seconds(root, rg))[0])
            times["rg"].append(command_seconds(root, [rg, "-n", REGEX, "src"]))
    return times


def corpus_ms(make: Callable[[Path], None], rg: str | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="copilot_nb_bench_") as folder:
        root = Path(folder)
        make(root)
        times = asyncio.run(measure(root, rg))
    return {name: statistics.median(values) * 1000 for name, values in times.items() if values}


def main() -> dict[str, float]:
    if shutil.which("grep") is None:
        print("\nbench_search: grep is not installed; skipped")
        return {}
    saved = os.environ.pop(ENV, None)
    rg = find_ripgrep()
    results: dict[str, float] = {}
    print(f"\nsearch_text (median of {REPEATS}, runs alternating)")
    print(f"{'tree':<20} {'engine':<22} {'ms':>8} {'baseline':<10} {'ms':>8} {'ratio':>6} target")
    try:
        for corpus, make in CORPORA.items():
            ms = corpus_ms(make, rg)
            rows = [("Python (RIPGREP=0)", "python", "grep -rnE", "grep", GREP_TARGET)]
            if rg is not None:
                rows.append(("ripgrep (default)", "ripgrep", "rg -n", "rg", RG_TARGET))
                rows.append(("ripgrep (default)", "ripgrep", "Python", "python", 1.0))
            for label, ours, base_label, base, target in rows:
                ratio = ms[ours] / ms[base]
                results[f"{corpus}: {ours}/{base}"] = ratio
                print(
                    f"{corpus:<20} {label:<22} {ms[ours]:>8.1f} {base_label:<10} {ms[base]:>8.1f} "
                    f"{ratio:>5.2f}x {'< ' + format(target, 'g') + 'x' if target > 1 else ''}"
                )
    finally:
        os.environ.pop(ENV, None)
        if saved is not None:
            os.environ[ENV] = saved
    if rg is None:
        print("ripgrep: not installed (pip install ripgrep); not measured")
    return results


if __name__ == "__main__":
    main()
