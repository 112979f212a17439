"""The one glob syntax of the package: find_files and search_text patterns, and secret-path rules.

`**` crosses folders, `*` and `?` do not, `[abc]` and `{a,b}` give choices, and a glob without '/'
matches a name at any depth. A glob is always relative to the workspace root: one that could
name a place outside it (a leading '/' or '~', a drive letter, a `..` segment in any of its
`{}` alternatives, with '/' or '\\' as the separator) is refused with a message the model can act
on. The walk only ever yields paths below the root, so a pattern cannot match outside; what could
lead out is the literal folder a glob starts with, which the tools resolve through the
`Workspace` before walking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_GLOB_CHARS = 1000
"""Longer globs are refused: no project needs one, and a hijacked model may try."""
MAX_ALTERNATIVES = 1024
"""`{}` expansions checked for `..`; a glob with more choices than this is refused."""
MAX_NESTING = 10
"""`{}` inside `{}` this deep at most."""
SIMPLE_STARS = 2
"""Globs with at most this many `*` runs (`**/*.py`) cannot backtrack for long on any path, and
are matched by `re` at full speed; others are matched with a time limit."""
GLOB_TIMEOUT = 1.0
"""Seconds one path may take to match a glob with many stars."""
GLOB_ADVICE = "globs are relative to the workspace root, e.g. 'src/**/*.py'"
_OUTSIDE = re.compile(r"[/\\]|~(?:[\w.-]*[/\\]|$)|[A-Za-z]:[/\\]")
"""A glob start that names a place outside: the file system root, a home folder, a drive."""


class GlobError(ValueError):
    """A glob that is malformed or would leave the workspace; the message says what to send."""


@dataclass(frozen=True, kw_only=True)
class Glob:
    """A compiled glob: where to start walking, and the regex a root-relative path must match."""

    text: str
    regex: re.Pattern[str]
    start: str = ""
    """The literal folder the glob begins with ('' for the root), so the walk can start there."""
    bounded: Any = field(default=None, compare=False)
    """For a glob with many stars, the same regex in the `regex` package, matched with a time
    limit: `*a*a*a*a*x` backtracks for minutes on a long name, holding the interpreter."""

    def matches(self, relative: str) -> bool:
        """Whether a root-relative posix path (as a walk yields it) matches."""
        if self.bounded is None:
            return self.regex.fullmatch(relative) is not None
        try:
            return self.bounded.fullmatch(relative, timeout=GLOB_TIMEOUT) is not None
        except TimeoutError:
            raise GlobError(
                f"glob {self.text[:200]!r} took longer than {GLOB_TIMEOUT:g} s to match "
                f"{relative!r}; use fewer '*' and '**' (e.g. 'src/**/*.py')"
            ) from None


def compile_glob(text: str) -> Glob:
    """`**/*.py`, `src/**`, `*.{md,txt}`; a glob without '/' matches a file name at any depth.

    Raises GlobError for an unbalanced `[` or `{`, and for a glob that leaves the workspace.
    """
    check_glob(text)
    pattern = text.strip()
    anchored = "/" in pattern.rstrip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/")
    if pattern in ("", "."):
        pattern = "**"
    body = _translate(pattern)
    if not anchored:
        body = "(?:.*/)?" + body
    literal = []
    for part in pattern.split("/")[:-1] if anchored else []:
        if any(c in part for c in "*?[{"):
            break
        if part not in ("", "."):
            literal.append(part)
    try:
        regex = re.compile(body, re.DOTALL)
    except (re.error, RecursionError) as exc:
        raise GlobError(f"glob {text[:200]!r} is not valid ({exc}); {GLOB_ADVICE}") from None
    bounded = None
    if len(re.findall(r"\*+", pattern)) + (not anchored) > SIMPLE_STARS:
        import regex as regex_module  # only for the rare glob that could backtrack for long

        bounded = regex_module.compile(body, regex_module.DOTALL)
    return Glob(text=text, regex=regex, start="/".join(literal), bounded=bounded)


def check_glob(text: str) -> None:
    """Raise GlobError if the glob could name a path outside the workspace root."""
    shown = repr(text) if len(text) <= 200 else repr(text[:200]) + "…"
    if "\x00" in text:
        raise GlobError(f"glob {shown} contains a NUL byte; {GLOB_ADVICE}")
    if len(text) > MAX_GLOB_CHARS:
        raise GlobError(
            f"glob {shown} is {len(text):,} characters long (at most {MAX_GLOB_CHARS:,}); "
            f"{GLOB_ADVICE}"
        )
    pattern = text.strip()
    outside = _OUTSIDE.match(pattern)
    if outside is not None:
        start = outside.group()[:2] if outside.group()[0].isalpha() else outside.group()[0]
        hint = " (write './*.py' for files at the root only)" if start == "/" else ""
        raise GlobError(
            f"glob {shown} leaves the workspace: it starts with {start!r}{hint}; {GLOB_ADVICE}"
        )
    depth = deepest = 0
    for c in pattern:
        depth += (c == "{") - (c == "}" and depth > 0)
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        raise GlobError(f"glob {shown} nests '{{' more than {MAX_NESTING} deep; {GLOB_ADVICE}")
    for expansion in _expansions(pattern):
        if ".." in re.split(r"[/\\]", expansion):
            raise GlobError(f"glob {shown} leaves the workspace; {GLOB_ADVICE}")


def _expansions(pattern: str) -> list[str]:
    """Every `{a,b}` alternative spelled out (nested braces too), to find a `..` in any of them."""
    open_at = _first_brace(pattern)
    if open_at is None:
        return [pattern]
    close_at, choices = _split_brace(pattern, open_at)
    if close_at is None:  # unbalanced: _translate reports it
        return [pattern.replace("{", "").replace(",", "/")]
    head, tail = pattern[:open_at], pattern[close_at + 1 :]
    found: list[str] = []
    for choice in choices:
        for expansion in _expansions(head + choice + tail):
            found.append(expansion)
            if len(found) > MAX_ALTERNATIVES:
                raise GlobError(
                    f"glob {pattern[:200]!r} has more than {MAX_ALTERNATIVES:,} alternatives; "
                    "split it into simpler globs"
                )
    return found


def _first_brace(pattern: str) -> int | None:
    depth_class = False
    for i, c in enumerate(pattern):
        if c == "[":
            depth_class = True
        elif c == "]":
            depth_class = False
        elif c == "{" and not depth_class:
            return i
    return None


def _split_brace(pattern: str, open_at: int) -> tuple[int | None, list[str]]:
    """(index of the matching '}', the top-level choices inside)."""
    depth, start, choices = 0, open_at + 1, []
    for i in range(open_at, len(pattern)):
        c = pattern[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                choices.append(pattern[start:i])
                return i, choices
        elif c == "," and depth == 1:
            choices.append(pattern[start:i])
            start = i + 1
    return None, choices


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):  # any run of two or more stars is `**`
            while i < n and pattern[i] == "*":
                i += 1
            if pattern.startswith("/", i):
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                raise GlobError(f"glob {pattern!r} has a '[' without a closing ']'")
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
        raise GlobError(f"glob {pattern!r} has a '{{' without a closing '}}'")
    return "".join(out)
