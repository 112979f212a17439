"""Walking the workspace as git sees it: `.git` and gitignored paths skipped, globs matched.

`.gitignore` files apply at every depth (a deeper one wins, `!` re-includes), as does
`.git/info/exclude`; an ignored folder is not entered. Symlinks are not followed (as `grep -r`
and ripgrep do), so a walk never leaves the root and never loops.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

ALWAYS_SKIPPED = frozenset({".git", ".ipynb_checkpoints"})
"""Folders never walked: git's store, and Jupyter's copies of every notebook."""


@dataclass(frozen=True, kw_only=True)
class Glob:
    """A compiled glob: where to start walking, and the regex a root-relative path must match."""

    text: str
    regex: re.Pattern[str]
    start: str = ""
    """The literal folder the glob begins with ('' for the root), so the walk can start there."""

    def matches(self, relative: str) -> bool:
        return self.regex.fullmatch(relative) is not None


def compile_glob(text: str) -> Glob:
    """`**/*.py`, `src/**`, `*.{md,txt}`; a glob without '/' matches a file name at any depth.

    Raises ValueError for an unbalanced `[` or `{`.
    """
    pattern = text.strip()
    anchored = "/" in pattern.rstrip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.lstrip("/").rstrip("/")
    if pattern == "":
        pattern = "**"
    body = _translate(pattern)
    if not anchored:
        body = "(?:.*/)?" + body
    literal = []
    for part in pattern.split("/")[:-1] if anchored else []:
        if any(c in part for c in "*?[{"):
            break
        literal.append(part)
    return Glob(text=text, regex=re.compile(body, re.DOTALL), start="/".join(literal))


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                raise ValueError(f"glob {pattern!r} has a '[' without a closing ']'")
            inner = pattern[i + 1 : end]
            if inner[:1] in ("!", "^"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise ValueError(f"glob {pattern!r} has a '{{' without a closing '}}'")
    return "".join(out)


@dataclass(kw_only=True)
class WalkStats:
    """What a walk left out, so a result can say why something is missing."""

    ignored: int = 0
    symlinks: int = 0
    folders: int = 0


def walk_files(
    root: Path, start: str = "", stats: WalkStats | None = None
) -> Iterator[tuple[str, str]]:
    """(root-relative posix path, absolute path) of every file git would see, in sorted order."""
    stats = stats if stats is not None else WalkStats()
    specs: list[tuple[str, _Rules]] = []
    exclude = root / ".git" / "info" / "exclude"
    if exclude.is_file():
        specs.append(("", _spec(exclude)))
    base = root
    prefix = ""
    for part in [p for p in start.split("/") if p]:  # the gitignores above the start folder apply
        specs.extend(_folder_spec(base, prefix))
        if part in ALWAYS_SKIPPED or _ignored(specs, prefix + part + "/"):
            return
        base, prefix = base / part, prefix + part + "/"
        if base.is_symlink() or not base.is_dir():
            return
    yield from _walk(base, prefix, specs, stats)


def _walk(
    top: Path, top_prefix: str, top_specs: list[tuple[str, _Rules]], stats: WalkStats
) -> Iterator[tuple[str, str]]:
    """Depth-first in sorted order, with an explicit stack rather than a generator per folder."""
    stack: list[tuple[str, str, list[tuple[str, _Rules]] | None]] = [
        (str(top), top_prefix, top_specs)
    ]
    while stack:
        path, relative, specs = stack.pop()
        if specs is None:  # a file
            yield relative, path
            continue
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        stats.folders += 1
        if any(e.name == ".gitignore" for e in entries):
            specs = [*specs, *_folder_spec(Path(path), relative)]
        for entry in entries:
            inner = relative + entry.name
            if entry.is_symlink():
                stats.symlinks += 1
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in ALWAYS_SKIPPED:
                    continue
                if specs and _ignored(specs, inner + "/"):
                    stats.ignored += 1
                    continue
                stack.append((entry.path, inner + "/", specs))
            elif specs and _ignored(specs, inner):
                stats.ignored += 1
            else:
                stack.append((entry.path, inner, None))


def _folder_spec(folder: Path, prefix: str) -> list[tuple[str, _Rules]]:
    path = folder / ".gitignore"
    return [(prefix, _spec(path))] if path.is_file() else []


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


class _Rules:
    """One ignore file's patterns, with a combined regex that rules most paths out at once."""

    def __init__(self, lines: list[str]) -> None:
        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)
        parts = [
            "(?:" + _NAMED_GROUP.sub("(?:", p.regex.pattern) + ")"
            for p in self.spec.patterns
            if p.include is not None and isinstance(p.regex, re.Pattern)
        ]
        try:
            self.any: re.Pattern[str] | None = re.compile("|".join(parts)) if parts else None
        except re.error:
            self.any = None

    def decide(self, relative: str) -> bool | None:
        if self.any is not None and self.any.search(relative) is None:
            return None
        return self.spec.check_file(relative).include


def _spec(path: Path) -> _Rules:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    return _Rules(lines)


def _ignored(specs: list[tuple[str, _Rules]], relative: str) -> bool:
    """The last .gitignore with an opinion decides, as git's deeper files override higher ones."""
    decision = False
    for base, rules in specs:
        if not relative.startswith(base):
            continue
        result = rules.decide(relative[len(base) :])
        if result is not None:
            decision = result
    return decision
