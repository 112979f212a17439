"""Where a kernel's conversations are saved: beside the notebook it serves, or, for a kernel
with none (a console, a script), in `<config dir>/conversations/`.

Apart from the recorder, so that `%load_ext` can see that there is nothing to take up without
importing the writer, its scrubbing rules and the usage tallies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...config import config_dir
from ...workspace.notebook_file import current_notebook_path
from .format import conversation_path

CONSOLE_FILE = "console" + ".copilot-chat.jsonl"


def saved_path(user_ns: Mapping[str, Any] | None) -> Path:
    """The file of this kernel's conversations, whether or not it exists yet."""
    notebook = current_notebook_path(user_ns or {})
    if notebook is not None:
        return conversation_path(os.path.abspath(notebook))
    return Path(config_dir()) / "conversations" / CONSOLE_FILE
