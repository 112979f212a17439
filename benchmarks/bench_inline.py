"""Inline completions: keystroke to ghost text, what copilot_nb adds over the model, and the
context it builds.

A real kernel with copilot_nb loaded and a DataFrame defined; a client that speaks the live
channel as the front end does sends `complete` requests (each with a new prefix, so none comes
from the cache) and waits for the final reply. The model is a loopback Ollama `/api/generate`
that answers in 50 ms. "Added" is the keystroke-to-text time less the model server's own time
for that request (so it holds the kernel's messaging, the context, the HTTP client and the
post-processing). The context is built for a cell in a 500-cell notebook whose kernel holds
1,000 variables (DataFrames, arrays, dicts, numbers).
"""

from __future__ import annotations

import os
import queue
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb.testing.fim_wires import FillServer  # noqa: E402
from copilot_nb.tools.kernel.completion_context import build_context  # noqa: E402

REQUESTS = 200
MODEL_DELAY = 0.05
E2E_P50, E2E_P99, ADDED_P50, CONTEXT_TARGET = 0.150, 0.300, 0.015, 0.010
SETUP = """\
import pandas as pd
df = pd.DataFrame({"city": ["Oslo", "Lima"] * 50, "price": [1.5, 2.0] * 50})
%config CopilotMagics.completion_model = "ollama:qwen2.5-coder"
"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def keystrokes() -> tuple[list[float], list[float], list[float]]:
    """Keystroke-to-final-text times, each one less the model server's own time, and the
    service's own part inside the kernel (its whole time less the model stream's)."""
    from jupyter_client.manager import start_new_kernel

    with FillServer(["price", "'].sum()"], delay=MODEL_DELAY) as server:
        env = {**os.environ, "OLLAMA_BASE_URL": f"{server.base_url}/v1"}
        manager, client = start_new_kernel(kernel_name="python3", env=env, startup_timeout=60)
        try:
            for code in ("%load_ext copilot_nb", SETUP):
                client.execute_interactive(code, timeout=60)
            comm_id = uuid.uuid4().hex
            data = {
                "protocol": 1,
                "path": "bench.ipynb",
                "server_root": str(ROOT),
                "client": client.session.session,
                "app": "JupyterLab",
            }
            client.shell_channel.send(
                client.session.msg(
                    "comm_open",
                    {"comm_id": comm_id, "target_name": "copilot_nb.live", "data": data},
                )
            )
            time.sleep(1.0)
            totals, added = [], []
            for n in range(REQUESTS + 5):
                request = {
                    "request": "complete",
                    "id": n,
                    "cell_id": "c",
                    "language": "python",
                    "prefix": f"x{n} = df['",
                    "suffix": "\n",
                    "cells_above": [SETUP],
                }
                served_before = len(server.served)
                began = time.perf_counter()
                client.shell_channel.send(
                    client.session.msg("comm_msg", {"comm_id": comm_id, "data": request})
                )
                _wait_final(client, comm_id, n)
                took = time.perf_counter() - began
                settle = time.monotonic() + 1  # the server notes its time just after its last byte
                while len(server.served) <= served_before and time.monotonic() < settle:
                    time.sleep(0.001)
                if n >= 5:  # the first requests warm the imports and the connection pool
                    totals.append(took)
                    added.append(took - server.served[served_before])
            inside = _service_times(client, len(totals))
            return totals, added, inside
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def _service_times(client: Any, last: int) -> list[float]:
    code = (
        "from copilot_nb.jupyter.ghost_text import completion_service\n"
        f"print([t.total - t.model for t in list(completion_service().timings)[-{last}:]])"
    )
    out: list[str] = []
    client.execute_interactive(
        code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
    )
    return [float(x) for x in "".join(out).strip().strip("[]").split(",") if x.strip()]


def _wait_final(client: Any, comm_id: str, ident: int) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            message = client.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        content = message["content"]
        if message["msg_type"] == "comm_msg" and content.get("comm_id") == comm_id:
            data = content.get("data") or {}
            if data.get("id") == ident and data.get("done"):
                if data.get("error"):
                    raise RuntimeError(data["error"])
                return data
    raise TimeoutError(f"no answer to completion {ident}")


def context_times() -> list[float]:
    import numpy as np
    import pandas as pd

    namespace: dict[str, Any] = {"pd": pd, "np": np}
    for i in range(1000):
        kind = i % 4
        if kind == 0:
            namespace[f"frame{i}"] = pd.DataFrame({f"c{j}": [1.0, 2.0] for j in range(20)})
        elif kind == 1:
            namespace[f"array{i}"] = np.zeros((10, 10))
        elif kind == 2:
            namespace[f"table{i}"] = {f"k{j}": j for j in range(30)}
        else:
            namespace[f"value{i}"] = i * 0.5
    cells = [
        f"frame{i * 2} = load({i})\nvalue{i * 2 + 3} = frame{i * 2}.c1.sum()" for i in range(500)
    ]
    prefix = "\n".join(
        f"total{i} = frame{4 * i}.c1 + array{4 * i + 1}.sum() + value{4 * i + 3}" for i in range(10)
    )
    prefix += "\nresult = frame8."
    times = []
    for _ in range(200):
        began = time.perf_counter()
        build_context(
            prefix=prefix, suffix="\nprint(result)", cells_above=cells[::-1], namespace=namespace
        )
        times.append(time.perf_counter() - began)
    return times


def main() -> None:
    contexts = context_times()
    totals, added, inside = keystrokes()
    print("\nInline completions (loopback model answering in 50 ms, a real kernel)")
    print(f"{'measure':<46}{'p50 ms':>9}{'p99 ms':>9}{'target ms':>14}")
    rows = (
        ("keystroke to final text", totals, f"{E2E_P50 * 1e3:.0f} / {E2E_P99 * 1e3:.0f}"),
        ("added over the model's own time", added, f"p50 {ADDED_P50 * 1e3:.0f}"),
        ("  of which the service in the kernel", inside, ""),
        ("context: 500 cells, 1,000 variables", contexts, f"{CONTEXT_TARGET * 1e3:.0f}"),
    )
    for name, values, target in rows:
        print(
            f"{name:<46}{statistics.median(values) * 1e3:>9.1f}"
            f"{percentile(values, 0.99) * 1e3:>9.1f}{target:>14}"
        )


if __name__ == "__main__":
    main()
