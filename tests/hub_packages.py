"""What the test hub's users' servers run: a venv of their own in the hub's folder, holding
copies of the installed packages they need and the project installed from its wheel.

Why copies: the users' servers run as other Unix users, and a checkout (with its `.venv`) often
sits under a folder they cannot enter: a home (0700 on Debian 12, root's everywhere) or a
`mktemp -d` folder. A venv that only points at the checkout's packages then fails to import,
and the hub test timed out waiting for the spawn. Copying the distributions the servers need
(JupyterHub's single-user server, JupyterLab, ipykernel and the wheel's own requirements, with
their dependencies) from the source venv, with no network, makes the result the same wherever
the checkout is.
"""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import Distribution, distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

SERVER_PACKAGES = ("jupyterhub", "jupyterlab", "ipykernel")
# What the servers read from their prefix besides site-packages: Jupyter's data and config
# folders. The rest (scripts naming the source's interpreter, the hub's own web pages) is skipped.
PREFIX_FOLDERS = ("share/jupyter/", "etc/jupyter/")


@dataclass(frozen=True, kw_only=True)
class Source:
    """Where the users' packages come from: a venv with them installed (the checkout's `.venv`,
    possibly under a folder the users cannot enter) and the project's wheel."""

    prefix: Path
    wheel: Path

    @property
    def site_packages(self) -> Path:
        return Path(
            sysconfig.get_path(
                "purelib", vars={"base": str(self.prefix), "platbase": str(self.prefix)}
            )
        )


def wheel_requirements(wheel: Path) -> list[str]:
    """The `Requires-Dist` lines of a wheel's METADATA: what the project needs installed."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        message = email.message_from_bytes(archive.read(metadata))
    return list(message.get_all("Requires-Dist") or [])


def needed(site: Path, requirements: Iterable[str]) -> list[Distribution]:
    """The distributions installed in `site` that `requirements` need, dependencies included
    (markers evaluated for this interpreter, extras followed as asked)."""
    found: dict[str, Distribution] = {}
    for dist in distributions(path=[str(site)]):
        found.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    seen: set[tuple[str, str]] = set()
    todo = [(Requirement(line), "") for line in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        if name not in found:
            raise LookupError(f"{requirement} is needed but not installed in {site}")
        for wanted in ("", *sorted(requirement.extras)):
            if (name, wanted) not in seen:
                seen.add((name, wanted))
                todo.extend((Requirement(line), wanted) for line in found[name].requires or [])
    return [found[name] for name in sorted({name for name, _ in seen})]


def copy_distribution(dist: Distribution, venv: Path, site: Path) -> None:
    """Put one installed distribution's files (its RECORD) at the same places in `venv`, whose
    site-packages is `site`: modules, metadata, and data in PREFIX_FOLDERS."""
    if dist.files is None:
        raise LookupError(f"{dist.metadata['Name']} has no RECORD to copy from")
    inside, prefix = str(site) + os.sep, str(venv) + os.sep
    wanted = tuple(prefix + folder for folder in PREFIX_FOLDERS)
    made: set[str] = set()
    for file in dist.files:
        target = os.path.normpath(os.path.join(site, file))
        if not target.startswith((inside, *wanted)):
            continue
        origin = str(dist.locate_file(file))
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        try:
            os.link(origin, target)  # the same file under a path the users can reach
        except FileNotFoundError:  # RECORD lists byte code that may not have been written
            continue
        except OSError:  # another file system: a copy, with its time so byte code stays valid
            shutil.copy2(origin, target)


def install(source: Source, venv: Path) -> None:
    """Fill the (empty) `venv` with what the users' servers run: the needed distributions from
    the source, then the project's wheel, by the source's pip, with no index. pip refuses if the
    copies leave any requirement of the wheel unmet."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    requirements = [*wheel_requirements(source.wheel), *SERVER_PACKAGES]
    for dist in needed(source.site_packages, requirements):
        copy_distribution(dist, venv, site)
    run = subprocess.run(
        [
            str(source.prefix / "bin" / "python"),
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-index",
            "--quiet",
            "--disable-pip-version-check",
            str(source.wheel),
        ],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PIP_NO_INPUT": "1"},
    )
    if run.returncode:
        raise RuntimeError(f"pip could not install {source.wheel.name} in {venv}:\n{run.stderr}")
