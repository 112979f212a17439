"""`%load_ext copilot_nb` cost: importing the extension in a fresh interpreter that has IPython loaded."""

from __future__ import annotations

import statistics
import subprocess
import sys

REPEATS = 7
PROBE = (
    "import time, IPython, IPython.core.magic;"
    "t = time.perf_counter(); import copilot_nb.jupyter.extension;"
    "print(time.perf_counter() - t)"
)
HEAVY = ("openai", "anthropic", "pandas", "numpy", "ipywidgets", "httpx", "copilot_nb.tools")


def main() -> float:
    times = [
        float(subprocess.check_output([sys.executable, "-c", PROBE], text=True))
        for _ in range(REPEATS)
    ]
    loaded = subprocess.check_output(
        [
            sys.executable,
            "-c",
            "import sys, copilot_nb.jupyter.extension; print(' '.join(sorted(sys.modules)))",
        ],
        text=True,
    ).split()
    heavy = [name for name in HEAVY if name in loaded]
    seconds = statistics.median(times)
    print(f"\n%load_ext copilot_nb import time (median of {REPEATS}, IPython already loaded)")
    print(f"{'seconds':>8}  {'target':>6}  heavy modules imported")
    print(f"{seconds:>8.3f}  {'< 0.3':>6}  {', '.join(heavy) or 'none'}")
    return seconds


if __name__ == "__main__":
    main()
