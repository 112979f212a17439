"""Reproducible demo notebooks: recorded once against a loopback server that speaks a provider's
wire format with scripted replies, then replayed from their cassette, offline, byte for byte.

A demo notebook replays its cassette with a `%copilot replay NAME.copilot.jsonl` cell and works
in a `scratch_workspace()`. `record()` runs it with `COPILOT_NB_CASSETTE=record` against a
`ScriptedServer`, writing the cassette; `replay()` runs it in strict replay and returns the
notebook's bytes, written so that a second run gives the same bytes (no timings, no machine
details). The same works against a real provider: `COPILOT_NB_CASSETTE=record` with
`COPILOT_NB_MODEL` set, and any way of running the notebook.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .server import ScriptedServer

DEMO_MODEL = "demo-script"
"""The model name a demo is recorded under: no real model, and the cassette says so."""
WIRES = {
    "openai": "OpenAI's Chat Completions",
    "openai-responses": "OpenAI's Responses API",
    "anthropic": "Anthropic's Messages API",
}
PROVIDER_VARIABLES = (
    "COPILOT_NB_MODEL",
    "COPILOT_NB_CASSETTE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "COPILOT_NB_GITHUB_TOKEN",
)
"""The reader's own settings, which a demo run must not see."""


SCRATCH = "<scratch>"
"""How a written demo notebook names the scratch folders' root (it differs between machines)."""


def scratch_root() -> Path:
    return Path(tempfile.gettempdir()) / "copilot_nb_demos"


def scratch_workspace(name: str) -> Path:
    """A fresh, empty folder for a demo to work in, made the working directory.

    Its path is the same on every run on one machine (`<temp>/copilot_nb_demos/<name>`), so
    what a demo shows does not change from run to run (two runs of one demo at once share it)."""
    folder = scratch_root() / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    os.chdir(folder)
    return folder


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the reader's provider settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    return {**env, **extra}


def execute(path: Path, env: Mapping[str, str], *, timeout: int = 300) -> Any:
    """Run the notebook top to bottom in a fresh kernel started in its folder; the executed
    notebook (nbformat) is returned, the file is not changed."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    # A cell's stdout arrives in as many stream messages as the kernel's flushes made, which
    # depends on timing: merged per cell, the notebook is the same bytes on every run.
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        allow_errors=False,
        coalesce_streams=True,
    )
    client.execute(cwd=str(path.parent), env=dict(env))
    return notebook


def stable_bytes(notebook: Any) -> bytes:
    """The notebook as a file, with nothing that differs between machines or runs: the Python
    version the kernel reported is dropped, no cell carries timings, and the scratch folders'
    root reads `<scratch>`."""
    import nbformat

    notebook.metadata["language_info"] = {"name": "python"}
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    text = nbformat.writes(notebook).replace(str(scratch_root()), SCRATCH)
    return (text + "\n").encode("utf-8")


def replay(path: Path) -> bytes:
    """The notebook replayed from its cassette (strict: no provider is called), as bytes."""
    env = clean_environment(COPILOT_NB_CASSETTE="replay")
    return stable_bytes(execute(path, env))


def record(path: Path, steps: Iterable[Any], *, provider: str = "openai") -> None:
    """Record the notebook's cassette against a loopback server playing `steps` in the wire
    format of `provider` (openai, openai-responses or anthropic)."""
    with ScriptedServer(steps, model_name=DEMO_MODEL) as server:
        note = (
            f"recorded against a loopback server speaking {WIRES[provider]} wire format, with "
            "scripted replies: no real model"
        )
        env = clean_environment(
            COPILOT_NB_CASSETTE="record",
            COPILOT_NB_CASSETTE_NOTE=note,
            COPILOT_NB_MODEL=f"{provider}:{DEMO_MODEL}",
            OPENAI_BASE_URL=server.url,
            OPENAI_API_KEY="demo",
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="demo",
        )
        execute(path, env)
        server.assert_complete()


def main(argv: list[str]) -> int:
    """`python -m copilot_nb.testing.demo_notebooks NOTEBOOK`: replay it and say whether the
    bytes are what is committed."""
    for name in argv:
        path = Path(name)
        same = replay(path) == path.read_bytes()
        print(f"{path}: {'byte-stable' if same else 'DIFFERS from the file'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
