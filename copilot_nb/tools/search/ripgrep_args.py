"""What ripgrep is told: the pattern when it means the same as in Python, and the arguments.

Pure functions, no I/O. Only a pattern that means the same in both dialects goes to ripgrep
(`same_in_rust`, a conservative scan): lookaround, backreferences, possessive quantifiers, nested
and POSIX classes, `\\<`, `(?x)`, a global flag after the start and anything else unusual stay
with the Python engine. Left: Unicode tables of different ages (characters added after Unicode 15,
for `\\w`, `\\d`, `\\b`, `\\p{..}`).

Two kinds of line are read differently by the engines: one with bytes that are not UTF-8 (U+FFFD
to Python, bytes no `.` matches to ripgrep) and one with a CR (a CRLF line end is no part of the
line to Python, and ripgrep keeps it). A pattern that could tell (`tells_odd_lines`: one that
could match a CR, U+FFFD or a line's end) also finds such lines in ripgrep (`ODD_LINE`), and the
Python engine judges each of them (`is_odd`).

ripgrep is given files, never folders: our walk has chosen them (ignore files, secrets, binary
files and the size limit), so ripgrep applies no rules of its own and reads each as text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

ARGS = ("--no-config", "--encoding=none", "--color=never", "--no-ignore", "--hidden", "--text",
        "--line-number", "--with-filename", "--null", "--no-heading")  # fmt: skip
"""The bytes as they are (no BOM sniffing, no transcoding, a CR part of its line: `--crlf`
would refuse a pattern that names one), no user config that could change the dialect, no rules
or binary detection of its own (the walk and the Python engine decided), and each matching line
as `path NUL number : line`."""
ARGUMENT_CHARS = 30_000 if os.name == "nt" else 120_000
"""Characters of paths given to one ripgrep process: within Windows' 32,767-character command
line, and far within ARG_MAX (and the environment's share of it) elsewhere."""

_CONTINUATION = r"[\x80-\xBF]"
_END = r"(?:[^\x80-\xBF]|$)"
_VALID = "|".join((
    r"[\x00-\x7F]", rf"[\xC2-\xDF]{_CONTINUATION}", rf"\xE0[\xA0-\xBF]{_CONTINUATION}",
    rf"[\xE1-\xEC\xEE\xEF]{_CONTINUATION}{{2}}", rf"\xED[\x80-\x9F]{_CONTINUATION}",
    rf"\xF0[\x90-\xBF]{_CONTINUATION}{{2}}", rf"[\xF1-\xF3]{_CONTINUATION}{{3}}",
    rf"\xF4[\x80-\x8F]{_CONTINUATION}{{2}}",
))  # fmt: skip
_TAIL2 = rf"(?:[^\x80-\xBF]|$|{_CONTINUATION}{_END})"
_INVALID = "|".join((
    r"[\x80-\xC1\xF5-\xFF]", rf"[\xC2-\xDF]{_END}",
    rf"\xE0(?:[^\xA0-\xBF]|$|[\xA0-\xBF]{_END})",
    rf"[\xE1-\xEC\xEE\xEF](?:[^\x80-\xBF]|$|{_CONTINUATION}{_END})",
    rf"\xED(?:[^\x80-\x9F]|$|[\x80-\x9F]{_END})",
    rf"\xF0(?:[^\x90-\xBF]|$|[\x90-\xBF]{_TAIL2})",
    rf"[\xF1-\xF3](?:[^\x80-\xBF]|$|{_CONTINUATION}{_TAIL2})",
    rf"\xF4(?:[^\x80-\x8F]|$|[\x80-\x8F]{_TAIL2})",
))  # fmt: skip
ODD_LINE = rf"\r|(?-u:^(?:{_VALID})*(?:{_INVALID}))"
"""A line with a CR, or with bytes that are not UTF-8: valid characters from the line's start,
then a byte that cannot begin one (no lookaround in Rust's regex)."""


def line_args(pattern: str) -> list[str]:
    """The arguments before the files: ripgrep prints each line the pattern matches."""
    return [*ARGS, f"--regexp={with_odd_lines(pattern)}", "--"]


def chunked(paths: list[str], limit: int = ARGUMENT_CHARS) -> Iterator[list[str]]:
    """The paths in runs whose lengths (one separator each) stay within `limit`."""
    run: list[str] = []
    size = 0
    for path in paths:
        if run and size + len(path) + 1 > limit:
            yield run
            run, size = [], 0
        run.append(path)
        size += len(path) + 1
    if run:
        yield run


def is_odd(line: bytes) -> bool:
    """Whether a line (its LF cut off) is one the engines could read differently (`ODD_LINE`)."""
    if b"\r" in line:
        return True
    if line.isascii():
        return False
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


_FLAG_GROUP = re.compile(r"\(\?[ims]*(?:-[ims]+)?([:)])")
_GLOBAL_FLAGS = re.compile(r"\(\?[ims]+\)")
_NAMED_GROUP = re.compile(r"\(\?P?<(?![=!])")
_COUNT = re.compile(r"\{\d+(?:,\d*)?\}")
_PUNCTUATION = r"!-/:;=?@\[-`{-~"
_ESCAPE = re.compile(
    r"\\(?:[wWsSdDtfva]|[bB](?!\{)|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}"
    r"|[pP](?:\{[\w =:^-]+\}|[A-Za-z])|[" + _PUNCTUATION + "])"
)
_CLASS_ESCAPE = re.compile(
    r"\\(?:[wWsSdDtfva]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}"
    r"|[pP](?:\{[\w =:^-]+\}|[A-Za-z])|[!-/:-@\[-`{-~])"
)
_UNSAFE_CHARACTERS = re.compile("[\x00\n\r\ud800-\udfff]")


def same_in_rust(pattern: str) -> bool:
    """Whether `pattern` (Python `regex` syntax, one line at a time) means the same to
    ripgrep's Rust engine. Conservative: every construct not known to agree makes it False."""
    if _UNSAFE_CHARACTERS.search(pattern):
        return False
    i, end, at_start = 0, len(pattern), True
    while i < end:
        char = pattern[i]
        if char == "(" and pattern.startswith("(?", i):
            flags = _FLAG_GROUP.match(pattern, i)
            if flags is not None and flags.group(1) == ")":  # global in Python, local in Rust
                if not (at_start and _GLOBAL_FLAGS.fullmatch(flags.group())):
                    return False
                i = flags.end()
                continue
            found = flags or _NAMED_GROUP.match(pattern, i)
            if found is None:
                return False  # lookaround, atomic, comments, conditionals, references, (?x)...
            i = found.end()
        elif char == "\\":
            escape = _ESCAPE.match(pattern, i)
            if escape is None:
                return False  # backreferences, \< \> \A \z \K \N{...}, \n, octal, unknown ones
            i = escape.end()
        elif char == "[":
            i = _class_end(pattern, i)
            if i < 0:
                return False
        elif char == "{" or char in "*+?":
            count = _COUNT.match(pattern, i) if char == "{" else None
            if char == "{" and count is None:
                return False  # a literal brace to Python, an error or more to Rust
            i = count.end() if count is not None else i + 1
            if pattern.startswith("+", i):
                return False  # a possessive quantifier
        else:
            i += 1
        at_start = False
    return True


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that starts at `i`, or -1 for a class whose
    meaning may differ (a nested or POSIX class, a set operation, \\b)."""
    i += 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern):
        char = pattern[i]
        if char == "]":
            return i + 1
        if char == "\\":
            escape = _CLASS_ESCAPE.match(pattern, i)
            if escape is None:
                return -1
            i = escape.end()
            continue
        if char == "[" or pattern.startswith(("&&", "--", "~~"), i):
            return -1
        i += 1
    return -1


_TELLING_ESCAPES = frozenset("WSDBPpuUs")
_CLASS_TELLING = frozenset("WSDsxuUtvfa")


def tells_odd_lines(pattern: str) -> bool:
    """Whether the pattern could match differently on an odd line (see `ODD_LINE`): it has
    `.`, `^` or `$`, a negated class, an escape that matches a CR or U+FFFD, or characters
    beyond ASCII or below the space."""
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape = pattern[i + 1 : i + 2]
            if escape in _TELLING_ESCAPES or (in_class and escape in _CLASS_TELLING):
                return True
            if escape == "x" and not 0x0D < int(pattern[i + 2 : i + 4] or "0", 16) < 0x80:
                return True
            i += 2
            continue
        if ord(char) > 0x7F or ord(char) < 0x20 or pattern.startswith("[^", i):
            return True
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char in ".^$" and not in_class:
            return True
        i += 1
    return False


def with_odd_lines(pattern: str) -> str:
    """The pattern for ripgrep: itself, and odd lines too when it could tell them."""
    return f"(?:{pattern})|{ODD_LINE}" if tells_odd_lines(pattern) else pattern


__all__ = ["ARGS", "ODD_LINE", "chunked", "is_odd", "line_args", "same_in_rust",
           "tells_odd_lines", "with_odd_lines"]  # fmt: skip
