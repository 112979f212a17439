"""The project's wheel, built once a run: the wheel tests read it and the JupyterHub test
installs it for the users' servers, so the suite builds it only once, however many pytest-xdist
workers ask for it (the first builds it under a lock in the run's shared temporary folder)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def project_wheel(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """`python -m build --wheel` of this checkout, without isolation (the venv has the tools)."""
    run_folder = tmp_path_factory.getbasetemp()
    if worker_id != "master":  # each worker's base is a folder of the run's shared one
        run_folder = run_folder.parent
    out = run_folder / "project-wheel"
    with FileLock(str(run_folder / "project-wheel.lock")):
        if not list(out.glob("copilot_nb-*.whl")):
            _build(out)
    (built,) = out.glob("copilot_nb-*.whl")
    return built


def _build(out: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if run.returncode:
        raise RuntimeError(f"the wheel did not build:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
