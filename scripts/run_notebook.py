"""Run a notebook top to bottom in a fresh kernel and print each cell as it finishes (`make demo`).

The kernel gets a settings folder of its own (`COPILOT_NB_CONFIG_DIR`), fresh each run: a demo
must never resume, or write into, the user's own saved conversations, approvals or keys."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from copilot_nb.agent.model_strings import default_model_spec

BOLD, PLAIN = "\x1b[1m", "\x1b[0m"


def text_of(output: dict) -> str:
    """The text a terminal can show for one output: Markdown or plain text, or the error."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return data.get("text/markdown") or data.get("text/plain") or ""


def transcript(cell: Any, number: int, total: int) -> str:
    """One code cell as a console shows it: its source, then what it showed (a display that was
    updated in place counts once, as its last state)."""
    shown: dict[str, str] = {}
    for output in cell.get("outputs", []):
        key = output.get("metadata", {}).get("display_id") or str(len(shown))
        shown[key] = text_of(output)
    lines = [f"\n{BOLD}[{number}/{total}] In [{cell.execution_count}]:{PLAIN} {cell.source}"]
    return "\n".join([*lines, *(text.rstrip() for text in shown.values())])


def demo_environment(environ: dict[str, str], settings: Path) -> dict[str, str]:
    """The kernel's environment: the user's, with copilot_nb's settings folder set to `settings`
    (where a console kernel keeps its conversation), so the user's own are never read."""
    return {**environ, "COPILOT_NB_CONFIG_DIR": str(settings)}


def main(path: str) -> int:
    """Run a copy of the notebook in build/: it replays its cassette, or, when a provider is
    configured (`COPILOT_NB_MODEL`, `OPENAI_API_KEY`), records a new one there with that model."""
    source = Path(path)
    build = Path("build")
    build.mkdir(exist_ok=True)
    cassette = source.with_name(source.stem + ".copilot.jsonl")
    if cassette.exists():
        shutil.copy(cassette, build / cassette.name)
    settings = Path(tempfile.mkdtemp(prefix="demo-settings-", dir=build))
    env = demo_environment(dict(os.environ), settings)
    spec = default_model_spec(env)
    if spec != "offline" and "COPILOT_NB_CASSETTE" not in env:
        env["COPILOT_NB_CASSETTE"] = "record"
        print(f"Running with {spec}, live; recording to {build / cassette.name}")
    notebook = nbformat.read(source, as_version=4)
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    print(
        f"Starting a kernel and running the {len(code)} code cells of {source} "
        f"(about 20 s; copilot_nb's settings for this run: {settings}, not yours)",
        flush=True,
    )

    def show(cell: Any, cell_index: int, **_: Any) -> None:
        if cell.cell_type == "code":
            print(transcript(cell, code.index(cell_index) + 1, len(code)), flush=True)

    client = NotebookClient(notebook, timeout=300, kernel_name="python3", on_cell_executed=show)
    try:
        client.execute(cwd=str(build), env=env)
    finally:
        shutil.rmtree(settings, ignore_errors=True)
    out = build / source.name
    nbformat.write(notebook, out)
    print(f"\nExecuted notebook written to {out}")
    print(f"The same in JupyterLab: `make lab`, then open {source} (or {out}) and run its cells")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "notebooks/01_quickstart.ipynb"))
