"""The wheel a user installs holds the whole package: every module imports from it and the chat
panel finds its JavaScript and CSS, with the source tree out of reach; the front-end extension
comes built, where JupyterLab and Notebook 7 find it, for a machine with no Node."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.external

ROOT = Path(__file__).resolve().parent.parent
FRONTEND_SOURCES = "copilot_nb/jupyter/frontend/"  # shipped built, as data; see below
EXTENSION_DATA = re.compile(r"copilot_nb-[^/]+\.data/data/share/jupyter/labextensions/copilot-nb/")

IMPORT_EVERYTHING = """
import importlib, pkgutil, sys
import copilot_nb
assert copilot_nb.__file__.startswith(sys.argv[1]), copilot_nb.__file__
names = [m.name for m in pkgutil.walk_packages(copilot_nb.__path__, "copilot_nb.")]
for name in names:
    importlib.import_module(name)
from copilot_nb.jupyter.panel.widget import ChatWidget
assert "function markdown" in ChatWidget._esm and ".cnb" in ChatWidget._css
print(len(names))
"""


def test_the_wheel_holds_every_file_of_the_package(project_wheel: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "copilot_nb"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    names = set(zipfile.ZipFile(project_wheel).namelist())
    missing = [
        path
        for path in tracked
        if path not in names
        and not path.startswith(FRONTEND_SOURCES)
        # TypeScript's declarations of the panel's messages: read only by the type check
        and not path.endswith(".d.ts")
    ]
    assert missing == []


def test_every_module_imports_from_the_wheel_alone(project_wheel: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "site"
    zipfile.ZipFile(project_wheel).extractall(unpacked)
    env = {**os.environ, "PYTHONPATH": str(unpacked)}
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING, str(unpacked)],
        cwd=tmp_path,  # not the repository: the source tree must not be what imports
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert int(run.stdout.strip()) > 60


def test_the_wheel_installs_the_built_front_end_extension_and_none_of_its_sources(
    project_wheel: Path,
) -> None:
    archive = zipfile.ZipFile(project_wheel)
    names = archive.namelist()
    extension = {
        name[match.end() :]: name for name in names if (match := EXTENSION_DATA.match(name))
    }
    assert {"package.json", "install.json", "static/style.js"} <= extension.keys()
    assert [path for path in extension if re.fullmatch(r"static/remoteEntry\.\w+\.js", path)]
    built = json.loads(archive.read(extension["package.json"]))
    assert built["jupyterlab"]["_build"]["load"] in extension  # what JupyterLab loads first
    install = json.loads(archive.read(extension["install.json"]))
    assert install["packageManager"] == "python" and install["packageName"] == "copilot_nb"
    sources = [
        name
        for name in names
        if "node_modules/" in name
        or name.endswith((".ts", ".tsx", ".tsbuildinfo"))
        or name.startswith(FRONTEND_SOURCES)
    ]
    assert sources == []
