"""The project's wheel, built once a session: the wheel tests read it and the JupyterHub test
installs it for the users' servers, so the suite builds it only once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def project_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build --wheel` of this checkout, without isolation (the venv has the tools)."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if run.returncode:
        raise RuntimeError(f"the wheel did not build:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    (built,) = out.glob("copilot_nb-*.whl")
    return built
