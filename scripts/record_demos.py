"""Record the demo notebooks' cassettes again, then write each notebook with its replayed outputs.

    .venv/bin/python scripts/record_demos.py [notebooks/NN_name.ipynb ...]

Each demo's model side is `scripts/demo_replies/<notebook name>.py` (`STEPS`, and `PROVIDER`:
the wire format the loopback server speaks). The notebook is run three times: once recording
against the loopback server, twice replaying; the second replay must give the same bytes as the
first, which are written to the notebook.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from copilot_nb.testing.demo_notebooks import record, replay

ROOT = Path(__file__).resolve().parent.parent
REPLIES = ROOT / "scripts" / "demo_replies"


def replies_for(notebook: Path) -> ModuleType:
    path = REPLIES / f"{notebook.stem}.py"
    spec = importlib.util.spec_from_file_location(f"demo_replies.{notebook.stem}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no replies for {notebook.name}: write {path.relative_to(ROOT)}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(names: list[str]) -> int:
    # A settings folder of its own: no MCP server or instructions of the recorder's reach the
    # demos, and the cassettes are signed with a key nobody keeps, so every reader (this one
    # too) replays them as a cassette from elsewhere, trusted by the visible `--trust`.
    notebooks = [Path(n).resolve() for n in names] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for notebook in notebooks:
        replies = replies_for(notebook)
        os.environ["COPILOT_NB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="copilot_nb_recorder_")
        record(notebook, replies.STEPS, provider=getattr(replies, "PROVIDER", "openai"))
        os.environ["COPILOT_NB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="copilot_nb_reader_")
        first = replay(notebook)
        second = replay(notebook)
        if first != second:
            print(f"{notebook.name}: two replays gave different bytes; not written")
            return 1
        notebook.write_bytes(first)
        print(f"{notebook.name}: recorded, replayed twice, byte-stable")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
