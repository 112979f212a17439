"""String literals in Python source as Python reads them: implicitly joined runs, and what each
run is given to.

`"ghp_abc" "def..."` is one string to Python, and a key split so passes a test made for one
literal (neither half is a token). `runs` tokenizes the text (`tokenize`, which knows comments,
line continuations and brackets) and joins each run of adjacent literals, so the masking tests
see the whole value. Source being typed is often unfinished: tokens are read until the first
error, and a literal left open at the cursor counts to the end of its line.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

_PREFIX = "rRbBuUfF"
_SKIPPED = (tokenize.NL, tokenize.COMMENT)
_GIVING = ("=", ":", ":=")
"""Operators after which a literal is given to the name or key before them."""


@dataclass(frozen=True, kw_only=True)
class Run:
    """Adjacent string literals: where they are in the text, their joined contents, and the
    name or key they are given to ("" when none)."""

    start: int
    end: int
    value: str
    owner: str
    parts: int


def runs(text: str) -> list[Run]:
    """Each run of adjacent string literals in `text`, in order."""
    if "'" not in text and '"' not in text:
        return []
    starts = _line_starts(text)
    found: list[Run] = []
    current: list[tokenize.TokenInfo] = []
    before: list[tokenize.TokenInfo] = []

    def close() -> None:
        if current:
            start = _offset(starts, current[0].start)
            end = _offset(starts, current[-1].end)
            value = "".join(_contents(token.string) for token in current)
            found.append(
                Run(start=start, end=end, value=value, owner=_owner(before), parts=len(current))
            )
            before.extend(current)
            current.clear()

    for token in _tokens(text):
        if token.type in _SKIPPED:
            continue
        if token.type == tokenize.STRING or _open_literal(token):
            if _open_literal(token):
                line_end = text.find("\n", _offset(starts, token.start))
                end = len(text) if line_end < 0 else line_end
                string = text[_offset(starts, token.start) : end]
                token = token._replace(string=string, end=_position(starts, end))
            current.append(token)
            continue
        close()
        before.append(token)
        del before[:-6]
    close()
    return found


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    """The tokens up to the first error (unfinished code is what a completion sees)."""
    tokens: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            tokens.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass
    return tokens


def _open_literal(token: tokenize.TokenInfo) -> bool:
    """A quote tokenize could not close: a literal still being typed."""
    return token.type == tokenize.ERRORTOKEN and token.string.lstrip(_PREFIX)[:1] in ("'", '"')


def _contents(literal: str) -> str:
    """A literal's text between its quotes, escapes as written."""
    body = literal.lstrip(_PREFIX)
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    inner = body[len(quote) :]
    return inner[: -len(quote)] if quote and inner.endswith(quote) else inner


def _owner(before: list[tokenize.TokenInfo]) -> str:
    """The name or key a run is given to: `api_key = `, `token=`, `"password": `, `cfg["key"] = `,
    `api_key: str = `, `password = (`."""
    if len(before) >= 2 and before[-1].string == "(" and before[-2].string in _GIVING:
        before = before[:-1]  # a value in brackets, to split it over lines
    if not before or before[-1].type != tokenize.OP or before[-1].string not in _GIVING:
        return ""
    rest = before[:-1]
    if len(rest) >= 2 and rest[-1].string == "]":
        rest = rest[:-1]
    if len(rest) >= 3 and rest[-2].string == ":" and before[-1].string == "=":
        rest = rest[:-2]  # an annotation: `api_key: str = ...`
    if not rest:
        return ""
    if rest[-1].type == tokenize.NAME:
        return rest[-1].string
    if rest[-1].type == tokenize.STRING:
        return _contents(rest[-1].string)
    return ""


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], position: tuple[int, int]) -> int:
    row, column = position
    return starts[row - 1] + column if row - 1 < len(starts) else starts[-1]


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    row = max(i for i, start in enumerate(starts) if start <= offset)
    return row + 1, offset - starts[row]
