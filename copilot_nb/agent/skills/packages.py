"""The skills of the packages the kernel has imported, version-matched.

Libraries ship skills inside their wheels by the Agent Plugins convention (the `agent-plugins`
package: a `<dist>.agent-plugin/` folder with `plugin.json` and `skills/`, named by an
`agent_plugins.json` in the distribution's metadata; `agent_plugins.installed()` finds them).
Of those, only a distribution one of whose top-level modules is in `sys.modules` is offered, at
the version installed; when the imported module says another `__version__` (upgraded on disk
since it was imported), its skills describe other code and are not offered.

Finding them lists each folder on `sys.path` once (a few milliseconds), remembered until one
of those folders changes (an install adds a `.dist-info` there) or the path itself does.
"""

from __future__ import annotations

import os
import sys
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
    problem: str = ""


MARKER = "agent_plugins.json"
"""The file in a distribution's metadata that names its Agent Plugin's folder."""
OWN = frozenset({"agent-plugins"})
"""Imported by copilot_nb itself to read the others: its skills (packaging plugins) are not the
user's work, and would be offered in every kernel."""
_cache: tuple[tuple[object, ...], tuple[PackageSkills, ...]] | None = None


def imported_package_skills(modules: dict[str, object] | None = None) -> list[PackageSkills]:
    """The installed packages with skills whose code the kernel has imported."""
    loaded = sys.modules if modules is None else modules
    found = []
    for package in _installed():
        names = [name for name in package.modules if name in loaded]
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
            )
    _cache = (key, tuple(found.values()))
    return _cache[1]


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
