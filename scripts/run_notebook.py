"""Run a notebook top to bottom in a fresh kernel and print what each cell showed (`make demo`)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from copilot_nb.agent.model_strings import default_model_spec


def text_of(output: dict) -> str:
    """The text a terminal can show for one output: Markdown or plain text, or the error."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return data.get("text/markdown") or data.get("text/plain") or ""


def main(path: str) -> int:
    """Run a copy of the notebook in build/: it replays its cassette, or, when a provider is
    configured (`COPILOT_NB_MODEL`, `OPENAI_API_KEY`), records a new one there with that model."""
    source = Path(path)
    build = Path("build")
    build.mkdir(exist_ok=True)
    cassette = source.with_name(source.stem + ".copilot.jsonl")
    if cassette.exists():
        shutil.copy(cassette, build / cassette.name)
    env = dict(os.environ)
    spec = default_model_spec(env)
    if spec != "offline" and "COPILOT_NB_CASSETTE" not in env:
        env["COPILOT_NB_CASSETTE"] = "record"
        print(f"Running with {spec}, live; recording to {build / cassette.name}")
    notebook = nbformat.read(source, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3")
    client.execute(cwd=str(build), env=env)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        print(f"\n\x1b[1mIn [{cell.execution_count}]:\x1b[0m {cell.source}")
        shown: dict[str, str] = {}
        for output in cell.get("outputs", []):
            key = output.get("metadata", {}).get("display_id") or str(len(shown))
            shown[key] = text_of(output)
        for text in shown.values():
            print(text.rstrip())
    out = build / source.name
    nbformat.write(notebook, out)
    print(f"\nExecuted notebook written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "notebooks/01_quickstart.ipynb"))
