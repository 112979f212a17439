"""The kernel's event loop stays responsive while tools read a 50 MB file and search 10,000 files.

A ticker task asks the loop for a wake-up every 5 ms and records how late each one comes; the
worst delay while a tool runs through `ToolSet.call_tool` is the lag a user would feel (a widget
click, a Stop button). The search is also timed against `grep -rn` on the same generated tree.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from copilot_nb.tools import ToolSet, file_tools
from copilot_nb.tools.search.tools import search_tools
from copilot_nb.workspace.workspace import Workspace

REPEATS = 5
TICK = 0.005
FOLDERS, FILES_PER_FOLDER = 100, 100
BIG_FILE_BYTES = 50 * 1024 * 1024
REGEX = "def handle_[a-z]+_event"
LAG_TARGET_MS = 50.0
GREP_TARGET = 2.0


def make_tree(root: Path) -> None:
    """10,000 Python-like files of ~3 KB in 100 folders, a .gitignore, and one 50 MB file."""
    for folder in range(FOLDERS):
        package = root / "src" / f"pkg_{folder:03d}"
        package.mkdir(parents=True)
        for number in range(FILES_PER_FOLDER):
            lines = [f'"""Module {folder}.{number}: generated for the loop benchmark."""', ""]
            for block in range(12):
                name = ("click", "key", "resize", "scroll")[(folder + number + block) % 4]
                kind = "handle" if (number * 12 + block) % 40 == 0 else "process"
                lines += [
                    f"def {kind}_{name}_event(event, state={block}):",
                    f"    value = state * {number} + len(event.get('{name}', ()))",
                    "    return {'value': value, 'ok': True}",
                    "",
                ]
            (package / f"mod_{number:03d}.py").write_text("\n".join(lines) + "\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "build").mkdir()
    (root / "build" / "ignored.py").write_text("def handle_click_event(): pass\n")
    line = "x = some_function(argument_one, argument_two)  # a comment with ünïcode\n"
    with open(root / "big.txt", "w", encoding="utf-8") as f:
        f.write(line * (BIG_FILE_BYTES // len(line.encode())))


async def worst_lag(
    run: Callable[[], Awaitable[Any]], tick: float = TICK
) -> tuple[float, float, Any]:
    """(seconds the call took, worst delay in seconds of a ticker every `tick`, its result)."""
    worst = 0.0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal worst
        while not stop.is_set():
            started = time.perf_counter()
            await asyncio.sleep(tick)
            worst = max(worst, time.perf_counter() - started - tick)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(tick * 4)
    started = time.perf_counter()
    result = await run()
    elapsed = time.perf_counter() - started
    stop.set()
    await task
    return elapsed, worst, result


def grep_seconds(root: Path) -> tuple[float, int]:
    """Median time of `grep -rnE` over the same tree, and how many lines it found."""
    times, found = [], 0
    for _ in range(REPEATS):
        started = time.perf_counter()
        done = subprocess.run(
            ["grep", "-rnE", REGEX, "src"], cwd=root, capture_output=True, text=True, check=False
        )
        times.append(time.perf_counter() - started)
        found = len(done.stdout.splitlines())
    return statistics.median(times), found


async def measure(root: Path) -> list[tuple[str, float, float, str]]:
    workspace = Workspace(root)
    tools = ToolSet([*file_tools(workspace), *search_tools(workspace)])
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("read_file 50 MB (first window)", "read_file", {"path": "big.txt"}),
        ("read_file 50 MB (line 600,000)", "read_file", {"path": "big.txt", "start_line": 600_000}),
        ("find_files **/*.py (10,000 files)", "find_files", {"glob": "**/*.py"}),
        ("search_text over 10,000 files", "search_text", {"regex": REGEX, "glob": "src/**"}),
    ]
    rows = []
    idle = [await worst_lag(lambda: asyncio.sleep(0.1)) for _ in range(REPEATS)]
    rows.append(("(idle loop, no tool: the noise floor)", 0.1, max(lag for _, lag, _ in idle), ""))
    for label, name, arguments in calls:
        await tools.call_tool(name, arguments)  # warm up the OS's caches and the thread pool
        timings, lags = [], []
        for _ in range(REPEATS):
            elapsed, lag, out = await worst_lag(lambda n=name, a=arguments: tools.call_tool(n, a))
            assert not out.is_error, out.content
            timings.append(elapsed)
            lags.append(lag)
        rows.append((label, statistics.median(timings), max(lags), out.content.split("\n")[0]))
    return rows


def main() -> list[tuple[str, float, float, str]]:
    if shutil.which("grep") is None:
        print("\nbench_loop: grep is not installed; skipped")
        return []
    with tempfile.TemporaryDirectory(prefix="copilot_nb_bench_") as folder:
        root = Path(folder)
        make_tree(root)
        rows = asyncio.run(measure(root))
        grep, grep_found = grep_seconds(root)
    print(
        f"\nEvent-loop lag while tools run (ticker every {TICK * 1000:.0f} ms; "
        f"median time, worst lag of {REPEATS})"
    )
    print(f"{'tool call':<36} {'ms':>8} {'worst lag ms':>13} {'target':>8}  result")
    for label, seconds, lag, head in rows:
        target = f"< {LAG_TARGET_MS:.0f}" if head else ""
        print(f"{label:<36} {seconds * 1000:>8.1f} {lag * 1000:>13.1f} {target:>8}  {head[:60]}")
    search = rows[-1][1]
    print(f"{'grep -rnE (same tree, ' + str(grep_found) + ' lines)':<36} {grep * 1000:>8.1f}")
    print(
        f"search_text / grep -rn: {search / grep:.2f}x (target < {GREP_TARGET:.0f}x); "
        f"worst lag under a tool {max(r[2] for r in rows[1:]) * 1000:.1f} ms "
        f"(target < {LAG_TARGET_MS:.0f})"
    )
    return rows


if __name__ == "__main__":
    main()
