"""Skills for tests: a `SKILL.md` in a folder, and a tiny installed package that ships skills
by the Agent Plugins convention (what `agent-plugins` builds into a wheel)."""

from __future__ import annotations

import json
from pathlib import Path


def write_skill(
    parent: Path, name: str, description: str, body: str = "", files: dict[str, str] | None = None
) -> Path:
    """`parent/name/SKILL.md` with this front matter and body, and `files` (path: text) beside
    it."""
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}\n"
    )
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def install_package_with_skill(
    site: Path, module: str, version: str, skill: str, *, imported_version: str | None = None
) -> None:
    """A package `module` installed in `site` (a folder for sys.path) at `version`, whose
    distribution ships the skill `skill` in its Agent Plugin; its `__version__` is
    `imported_version` (default: `version`)."""
    distribution = module.replace("_", "-")
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(f"__version__ = {imported_version or version!r}\n")
    plugin = f"{module}-{version}.agent-plugin"
    write_skill(site / plugin / "skills", skill, f"Use {module} the way its authors intend.")
    (site / plugin / "plugin.json").write_text(json.dumps({"name": distribution}))
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n"
    )
    files = ["plugin.json", f"skills/{skill}/SKILL.md"]
    (info / "agent_plugins.json").write_text(json.dumps({"root": plugin, "files": files}))
    record = [f"{module}/__init__.py,,", *(f"{plugin}/{f},," for f in files)]
    (info / "RECORD").write_text("\n".join(record) + "\n")
