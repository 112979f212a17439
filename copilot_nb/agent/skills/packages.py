"""The skills of the packages the kernel has imported, version-matched.

Libraries ship skills inside their wheels by the Agent Plugins convention (the `agent-plugins`
package: a `<dist>.agent-plugin/` folder with `plugin.json` and `skills/`, named by an
`agent_plugins.json` in the distribution's metadata; `agent_plugins.installed()` finds them).
Of those, only a distribution one of whose top-level modules is in `sys.modules`, imported from
the folder that holds the distribution's `.dist-info`, is offered, at the version installed;
when the imported module says another `__version__` (upgraded on disk since it was imported),
its skills describe other code and are not offered. A `.dist-info` is not an installation
because it lies on `sys.path`: the notebook's folder is there too, so one in the workspace (a
cloned repository's `evilpkg-1.0.dist-info`, a `pandas-3.1.1.dist-info` beside the real pandas)
or in the kernel's working folder offers nothing, unless that folder is this interpreter's own
site-packages (a project's `.venv`). An editable install, whose code lies away from its
`.dist-info`, offers none either.

Finding them lists each folder on `sys.path` once (a few milliseconds), remembered until one
of those folders changes (an install adds a `.dist-info` there) or the path itself does.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from contextlib import suppress
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path, PurePosixPath


@dataclass(frozen=True, kw_only=True)
class PackageSkills:
    """One installed distribution's skills folder, and whether its code is what is imported."""

    distribution: str
    version: str
    modules: tuple[str, ...]
    """Its top-level import names."""
    folder: Path
    """The plugin's `skills/` folder."""
    home: Path
    """The `sys.path` folder that holds its `.dist-info`, where its modules are installed."""
    problem: str = ""


MARKER = "agent_plugins.json"
"""The file in a distribution's metadata that names its Agent Plugin's folder."""
OWN = frozenset({"agent-plugins"})
"""Imported by copilot_nb itself to read the others: its skills (packaging plugins) are not the
user's work, and would be offered in every kernel."""
_cache: tuple[tuple[object, ...], tuple[PackageSkills, ...]] | None = None


def imported_package_skills(
    modules: dict[str, object] | None = None, *, workspace: Path | None = None
) -> list[PackageSkills]:
    """The installed packages with skills whose code the kernel has imported, none of them from
    the `workspace` (or the working folder) unless installed in this interpreter's own
    site-packages."""
    loaded = sys.modules if modules is None else modules
    found = []
    for package in _installed():
        if not _installed_here(package, workspace):
            continue
        names = [n for n in package.modules if n in loaded and _from(loaded[n], package.home)]
        if not names:
            continue
        imported = getattr(loaded[names[0]], "__version__", None)
        if isinstance(imported, str) and imported != package.version:
            problem = (
                f"{names[0]} {imported} is imported but {package.version} is installed; "
                "restart the kernel to use its skills"
            )
            package = replace(package, problem=problem)
        found.append(package)
    return found


def _installed() -> tuple[PackageSkills, ...]:
    """Every installed distribution that ships skills, remembered while `sys.path` stays put.

    One directory listing per `sys.path` folder finds the `.dist-info` folders that hold an
    `agent_plugins.json`; `agent_plugins` reads only those (and is imported only then)."""
    global _cache
    key = tuple(_stamp(entry) for entry in sys.path)
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    found: dict[str, PackageSkills] = {}
    for info in _marked():
        distribution = metadata.Distribution.at(info)
        name = distribution.metadata["Name"]
        if not name or name in found or name in OWN:
            continue
        folder = _skills_folder(name)
        if folder is not None:
            found[name] = PackageSkills(
                distribution=name,
                version=distribution.version,
                modules=_import_names(distribution),
                folder=folder,
                home=info.parent,
            )
    _cache = (key, tuple(found.values()))
    return _cache[1]


def _installed_here(package: PackageSkills, workspace: Path | None) -> bool:
    """Whether a distribution is installed rather than found lying in the user's folders: its
    `.dist-info` and its skills are outside the workspace and the working folder, or in this
    interpreter's own site-packages."""
    home, folder = _real(package.home), _real(package.folder)
    sites = _site_folders()
    if any(home == site or folder.is_relative_to(site) for site in sites):
        return home in sites
    mine = [_real(Path.cwd())] + ([_real(workspace)] if workspace is not None else [])
    return not any(home.is_relative_to(f) or folder.is_relative_to(f) for f in mine)


def _from(module: object, home: Path) -> bool:
    """Whether a module was imported from `home` (its file, or a package's folders, there)."""
    places = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or ())]
    real = _real(home)
    return any(isinstance(p, str) and _real(Path(p)).is_relative_to(real) for p in places)


def _site_folders() -> set[Path]:
    """This interpreter's own site-packages (its `.venv`'s, the user's site)."""
    paths = sysconfig.get_paths()
    folders = [paths.get("purelib"), paths.get("platlib"), site.getusersitepackages()]
    with suppress(AttributeError):  # a virtualenv's old `site` module lacks it
        folders += site.getsitepackages()
    return {_real(Path(folder)) for folder in folders if folder}


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _marked() -> list[Path]:
    """The `.dist-info` folders on `sys.path` that name an Agent Plugin, first ones first."""
    marked = []
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as listing:
                names = sorted(e.name for e in listing if e.name.endswith(".dist-info"))
        except OSError:
            continue
        folder = Path(entry or ".")
        marked += [folder / n for n in names if (folder / n / MARKER).is_file()]
    return marked


def _skills_folder(name: str) -> Path | None:
    """The `skills/` folder of a distribution's Agent Plugin, as `agent_plugins` locates it."""
    import agent_plugins

    try:
        folder = Path(agent_plugins.locate(name).path) / "skills"
    except agent_plugins.AgentPluginError:
        return None
    return folder if folder.is_dir() else None


def _import_names(distribution: metadata.Distribution) -> tuple[str, ...]:
    """The top-level modules a distribution installs (`top_level.txt`, else its file list)."""
    listed = (distribution.read_text("top_level.txt") or "").split()
    for file in distribution.files or ():
        top = PurePosixPath(str(file)).parts[0] if str(file) else ""
        if top.endswith((".dist-info", ".data", ".agent-plugin", ".pth")) or top in ("", ".."):
            continue
        listed.append(top.removesuffix(".py"))
    return tuple(dict.fromkeys(name for name in listed if name.isidentifier()))


def _stamp(entry: str) -> object:
    try:
        return (entry, os.stat(entry or ".").st_mtime_ns)
    except OSError:
        return (entry, None)
