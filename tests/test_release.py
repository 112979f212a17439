"""A released package's habits: the version written once (and the front end's npm copy agreeing),
a changelog with a section for it, and the license and changelog in what is shipped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import copilot_nb

pytestmark = pytest.mark.external

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_is_written_once_in_the_package() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "copilot_nb/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", copilot_nb.__version__)


def test_the_front_ends_package_json_agrees_with_the_version() -> None:
    package = json.loads((ROOT / "copilot_nb/jupyter/frontend/package.json").read_text())
    assert package["version"] == copilot_nb.__version__


def test_the_changelog_has_unreleased_and_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, re.M)
    assert headings[:2] == ["Unreleased", copilot_nb.__version__]


def test_the_wheel_carries_the_version_and_the_license(project_wheel: Path) -> None:
    with zipfile.ZipFile(project_wheel) as wheel:
        info = f"copilot_nb-{copilot_nb.__version__}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        names = wheel.namelist()
    assert f"\nVersion: {copilot_nb.__version__}\n" in metadata
    assert f"{info}/licenses/LICENSE" in names


def test_the_sdist_carries_the_license_and_the_changelog(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (sdist,) = tmp_path.glob("copilot_nb-*.tar.gz")
    assert sdist.name == f"copilot_nb-{copilot_nb.__version__}.tar.gz"
    with tarfile.open(sdist) as archive:
        names = {name.partition("/")[2] for name in archive.getnames()}
    assert {"LICENSE", "CHANGELOG.md", "pyproject.toml", "copilot_nb/__init__.py"} <= names
