"""An administrator's policy for a test: written to a file, found where copilot_nb looks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jupyter_core.paths
import pytest

from copilot_nb.policy import EXTRA_VARIABLE, FILE_NAME, loading

WritePolicy = Callable[..., Path]


@pytest.fixture
def policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WritePolicy:
    """`policy_file({...})` writes a policy into a system config folder of this test (the fixed
    folders and Jupyter's are swapped for empty temp folders, so the machine's own policy cannot
    interfere); `policy_file(text)` writes the text as it is."""
    system = tmp_path / "etc-jupyter"
    env = tmp_path / "env-etc-jupyter"
    system.mkdir()
    env.mkdir()
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [str(system)])
    monkeypatch.setattr(jupyter_core.paths, "ENV_CONFIG_PATH", [str(env)])
    monkeypatch.setattr(loading, "SYSTEM_FOLDERS", (str(env), str(system)))
    monkeypatch.delenv(EXTRA_VARIABLE, raising=False)

    def write(rules: Any, *, folder: str = "system") -> Path:
        path = (system if folder == "system" else env) / FILE_NAME
        path.write_text(rules if isinstance(rules, str) else json.dumps(rules), "utf-8")
        return path

    return write
