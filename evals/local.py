"""`python -m evals.local` (`make eval-local`): the evaluation against a real model server on
this machine, llama.cpp's `llama-server` with SmolLM2-135M-Instruct, on a few short tasks.

The server is the one the tests run (`make llama-server` builds it into build/llama-server;
`tests/llama_server.py` starts it on a free loopback port with llama.cpp's Qwen2.5 template, so
tools render). The kernel reaches it as any OpenAI-compatible server (`openai:smollm2` at its
`/v1`), and learns its context window from `/props`. A 135M model fails most tasks: what the run
shows is the wire and the accounting (rounds, tokens, seconds, errors) against a real server.
Other arguments go to `evals.run` (`--task`, `--task-timeout`, `--time-limit`, `--json`).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.llama_server import ALIAS, start

from .run import main as run_main

TASKS = ("df_total_revenue", "fix_name_typo", "df_returned_orders")
"""Three short tasks (one question of data, one fix, one count), when no `--task` is given."""
CONTEXT = 8192
"""llama-server's context, as the tests run it."""


def main(argv: list[str] | None = None) -> int:
    """Start the server, run the evaluation against it, stop the server; `evals.run`'s exit."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--model" in args:
        raise SystemExit("evals.local runs llama-server's model; use `make eval` for another")
    if "--task" not in args:
        args += [part for name in TASKS for part in ("--task", name)]
    if "--json" not in args:
        args += ["--json", "build/eval-local.json"]
    logs = Path(tempfile.mkdtemp(prefix="copilot_nb_eval_llama_"))
    server = start(logs, context=CONTEXT)
    print(f"llama-server {ALIAS} at {server.url} (context {CONTEXT:,}; log {server.log})")
    os.environ.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="none")
    try:
        return run_main(["--model", f"openai:{ALIAS}", *args])
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
