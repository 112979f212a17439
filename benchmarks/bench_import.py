"""`%load_ext copilot_nb` cost: the kernel's own thread, from the magic to the prompt's return.

Each run is a fresh interpreter with what a kernel has loaded before its first cell (ipykernel,
IPython, asyncio), so only copilot_nb's part is timed: the CPU time of the thread that runs the
cell (`time.thread_time`, which a busy machine's other processes do not inflate, nor the warm-up
thread that imports the agent afterwards), the median of REPEATS. Another run lists the modules
that thread imported while the magic ran (an audit hook): the load path's own, which the agent,
httpx and the tools must not be among. Last round's figures are the kernel's, measured on a
quiet machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

REPEATS = 7
TARGET_MS = 60.0
LAST_ROUND = {"ms": 53.0, "modules": 35}
"""Last round's figures: %load_ext in a kernel, and the copilot_nb modules it imported."""
PROBE = """
import json, sys, threading, time
import ipykernel.ipkernel
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
loaded = []
if sys.argv[1] == "modules":
    def heard(event, args):
        if event == "import" and threading.current_thread() is threading.main_thread():
            loaded.append(args[0])
    sys.addaudithook(heard)
started = time.thread_time()
shell.run_line_magic("load_ext", "copilot_nb")
print(json.dumps({"seconds": time.thread_time() - started, "loaded": sorted(set(loaded))}))
"""
HEAVY = (
    "copilot_nb.agent.loop.rounds",
    "copilot_nb.agent.session",
    "copilot_nb.tools",
    "httpx",
    "openai",
    "anthropic",
    "pandas",
    "numpy",
    "ipywidgets",
    "jsonschema",
)


def probe(what: str, folder: str) -> dict[str, object]:
    """One fresh interpreter's `%load_ext`, in an empty folder with a config dir of its own
    (no saved conversation to take up)."""
    env = {**os.environ, "COPILOT_NB_CONFIG_DIR": folder, "COPILOT_NB_MODEL": "offline"}
    shown = subprocess.check_output(
        [sys.executable, "-c", PROBE, what], text=True, cwd=folder, env=env
    )
    return json.loads(shown.splitlines()[-1])


def main() -> float:
    with tempfile.TemporaryDirectory(prefix="copilot_nb_import_") as folder:
        seconds = statistics.median(
            float(probe("time", folder)["seconds"])  # type: ignore[arg-type]
            for _ in range(REPEATS)
        )
        loaded: list[str] = probe("modules", folder)["loaded"]  # type: ignore[assignment]
    ours = [name for name in loaded if name.split(".")[0] == "copilot_nb"]
    heavy = [name for name in HEAVY if name in loaded]
    print(f"\n%load_ext copilot_nb, the kernel thread's CPU (median of {REPEATS})")
    print(f"{'figure':<44} {'last round':>10} {'this run':>9}  target")
    print(
        f"{'%load_ext copilot_nb':<44} {LAST_ROUND['ms']:>7.0f} ms {seconds * 1000:>6.1f} ms"
        f"  < {TARGET_MS:.0f} ms"
    )
    print(f"{'copilot_nb modules it imports':<44} {LAST_ROUND['modules']:>10} {len(ours):>9}")
    print(f"{'the agent, httpx, SDKs it imports':<44} {'none':>10} {len(heavy):>9}  none")
    if heavy:
        print("  " + ", ".join(heavy))
    return seconds


if __name__ == "__main__":
    main()
