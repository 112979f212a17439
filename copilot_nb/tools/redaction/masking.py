"""Secrets in the kernel kept from the model unless the user says yes: what counts, and how it is hidden.

A value is a secret by its name (`api_key`, `OPENAI_API_KEY`, `db_password`, `cfg["secret"]`:
the words key, token, secret, password, passwd, credential, auth, cookie, session, private), by
its type (`os.environ`, however it was reached), or by its look (`sk-...`, `ghp_...`, `AKIA...`,
a PEM private key, a JWT), whatever its name. A masked value shows its kind and size, never its
text: `<masked: str of 51 chars; ask to reveal>`. Text the tools show (reprs, history, tracebacks)
goes through `redact_text`, which masks secret-looking literals and literals assigned to
secret names. It is a filter for what the model reads, not a sandbox: code the user lets run can
still print anything.
"""

from __future__ import annotations

import os
import re
import reprlib
import types
from collections.abc import Mapping
from typing import Any

from ...text import SECRET_VALUE as _SECRET_VALUE
from ...text import is_secret_name, may_hold_secret
from ..views.outputs import clip_output
from ..views.reader_cut import collapse_base64, head_cut, join_cut, tail_cut
from ..views.static_view import (
    class_module,
    inherits,
    is_one_of,
    is_plain,
    length,
    mapping_items,
    type_name,
)
from .literals import runs

_URL_PASSWORD = re.compile(
    r"(?P<head>(?<![\w+.-])[a-zA-Z][\w+.-]*://[^\s:/@'\"]+:)(?P<secret>[^\s@/'\"]+)(?=@)"
)
_STRING = r"""[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
_ITEM = rf"(?:{_STRING}|[\w.+-]+)"
_ASSIGNED = re.compile(
    rf"""(?<![\w.\-])(?P<name>[A-Za-z_][\w.\-]*)
        (?P<sep>["']?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w.\[\], |]{{0,60}}?[ \t]*)?(?:==|:=|=|:)[ \t]*)
        (?P<literal>{_STRING}|[\[(]\s*(?:{_ITEM}\s*,\s*)*(?:{_ITEM}\s*)?[\])])""",
    re.VERBOSE,
)
"""A quoted literal, or a list of them, given to a name: `api_key = "..."`, `"password": '...'`,
`token='...'`, `"password": ["...", "..."]`."""
_STRING_LITERAL = re.compile(_STRING)
_SHELL_ASSIGNED = re.compile(
    r"(?m)^(?P<lead>[ \t]*(?:%set_env|%env|!?export|!)[ \t]*)"
    r"(?P<name>[A-Za-z_]\w*)(?P<sep>=|[ \t]+)(?P<value>[^\s'\"]\S*)"
)
"""`%env OPENAI_API_KEY=...`, `%set_env TOKEN ...`, `!export TOKEN=...`: unquoted values."""

_ENVIRONMENT_COPY_MIN = 5
"""Environment variables a mapping must repeat (value and all) to count as a copy of it."""
_ADJACENT = re.compile(
    r"""["'](?:[ \t]|\\?\r?\n|#[^\n]*)+[rRbBuUfF]{0,2}["']|[^"'\s]["']{2}[^"'\s]"""
)
"""Where a string literal may be followed by another (Python joins them): only text with one is
tokenized, which takes milliseconds."""
_MARGIN = 4000
"""Characters past a cut that are still searched for secrets (a PEM key is about 3,300)."""
REVEAL_HINT = "inspect_variable(name=..., reveal=True) asks the user to show it"


def reveal_hint(name: str) -> str:
    """How the model asks for a masked value: a `read-secret` call the user approves."""
    return f"inspect_variable(name={name!r}, reveal=True) asks the user to show it"


def is_environment(value: Any) -> bool:
    """`os.environ` (or `os.environb`), however it was reached, or a copy of it (a mapping most
    of whose first items are the process's environment variables, values and all)."""
    if inherits(value, os._Environ):
        return True
    items = mapping_items(value, 50)  # a dict's stored items: no user code runs to read them
    if items is None or len(items) < _ENVIRONMENT_COPY_MIN:
        return False
    same = sum(1 for k, v in items if type(k) is type(v) is str and os.environ.get(k) == v)
    return same >= max(_ENVIRONMENT_COPY_MIN, len(items) // 2)


def is_code(value: Any) -> bool:
    """Functions, classes, methods: what a secret-sounding name (`get_token`) does not hide."""
    return inherits(value, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def is_secret_value(name: str, value: Any) -> bool:
    """A kernel variable shown nowhere: `os.environ`, a secret-sounding name's value (not code:
    `get_token` is a function), or a string in a known secret format."""
    if is_environment(value) or (is_secret_name(name) and not is_code(value)):
        return True
    return type(value) is str and looks_secret(value)


def is_secret_label(label: Any) -> bool:
    """Whether a name, key, column, attribute or module name may not reach a prompt: the test
    a value gets (a secret-sounding name, a secret format) applied to the label's own text. A
    label that is not plain data counts as secret: showing it would run its `__repr__`."""
    if type(label) is str:
        return is_secret_name(label) or looks_secret(label)
    if type(label) is tuple:
        return any(is_secret_label(item) for item in label)
    return not is_plain(label) or is_secret_label(repr(label))


def looks_secret(text: str) -> bool:
    """Whether a string holds a well-known secret format (or a password in a URL)."""
    return bool(
        (may_hold_secret(text) and _SECRET_VALUE.search(text)) or _URL_PASSWORD.search(text)
    )


def mask_label(value: Any, *, hint: bool = True) -> str:
    """`<masked: str of 51 chars; ask to reveal>`: the kind and size of a value, not its text."""
    size = length(value)  # read statically: a secret's own code does not run either
    if type(value) is str:
        what = f"str of {size:,} chars"
    elif is_one_of(type(value), (bytes, bytearray)):
        what = f"{type_name(value)} of {size:,} bytes"
    elif is_environment(value):
        which = "os.environ" if inherits(value, os._Environ) else "copy of os.environ"
        what = f"{which} of {size:,} variables"
    else:
        what = type_name(value) + (f" of {size:,} items" if size is not None else "")
    return f"<masked: {what}{'; ask to reveal' if hint else ''}>"


def redact_value(text: str) -> tuple[str, int]:
    """A string with its secret-looking parts masked, and how many were."""
    count = 0

    def span(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"<masked: {len(match.group())} chars>"

    def password(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"{match.group('head')}<masked: {len(match.group('secret'))} chars>"

    if may_hold_secret(text):
        text = _SECRET_VALUE.sub(span, text)
    return _URL_PASSWORD.sub(password, text), count


def redact_text(text: str) -> tuple[str, int]:
    """Shown text (code, reprs, tracebacks) with secret-looking and secret-named literals masked
    (string literals Python joins, `"ghp_abc" "def..."`, tested as the one string they are)."""
    text, joined, _ = mask_joined_literals(text, tokenize=bool(_ADJACENT.search(text)))
    text, count = _redact_literals(text)
    return text, joined + count


def redact_cell(prefix: str, suffix: str) -> tuple[str, str, int]:
    """The cell being typed, `redact_text`-ed as one text (a key may cross the cursor, or be
    split over literals on both sides of it), and split at the cursor again."""
    whole = prefix + suffix
    line = prefix[prefix.rfind("\n") + 1 :]
    crossing = "'" in line or '"' in line or prefix.count('"""') % 2 or prefix.count("'''") % 2
    tokenize = bool(crossing) or bool(_ADJACENT.search(whole))
    whole, joined, cursor = mask_joined_literals(whole, tokenize=tokenize, cursor=len(prefix))
    before, found_before = _redact_literals(whole[:cursor])
    after, found_after = _redact_literals(whole[cursor:])
    return before, after, joined + found_before + found_after


def mask_joined_literals(text: str, *, tokenize: bool, cursor: int = 0) -> tuple[str, int, int]:
    """Each run of string literals (`literals.runs`) whose joined value looks secret or that is
    given to a secret name, masked whole; how many were, and where `cursor` is now (a masked
    run that held it leaves it after the mask)."""
    if not tokenize:
        return text, 0, cursor
    count = 0
    for run in reversed(runs(text)):
        if not (looks_secret(run.value) or (run.owner and is_secret_name(run.owner))):
            continue
        count += 1
        mask = f'"<masked: {len(run.value)} chars>"'
        text = text[: run.start] + mask + text[run.end :]
        if cursor > run.start:
            cursor = max(cursor + len(mask) - (run.end - run.start), run.start + len(mask))
    return text, count, cursor


def _redact_literals(text: str) -> tuple[str, int]:
    """redact_text's rules for one literal at a time: secret formats, literals given to secret
    names (`api_key = "..."`, `%env TOKEN=...`), passwords in URLs."""
    count = 0

    def assigned(match: re.Match[str]) -> str:
        nonlocal count
        if not is_secret_name(match.group("name")):
            return match.group()
        literal = _STRING_LITERAL.sub(masked_string, match.group("literal"))
        return match.group("name") + match.group("sep") + literal

    def masked_string(match: re.Match[str]) -> str:
        nonlocal count
        literal = match.group()
        body = literal.lstrip("rRbBuUfF")
        prefix = literal[: len(literal) - len(body)]
        quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
        inner = body[len(quote) : len(body) - len(quote)]
        if inner.startswith("<masked: "):
            return literal
        count += 1
        return f"{prefix}{quote}<masked: {len(inner)} chars>{quote}"

    def shell(match: re.Match[str]) -> str:
        nonlocal count
        if not is_secret_name(match.group("name")):
            return match.group()
        count += 1
        value = f"<masked: {len(match.group('value'))} chars>"
        return match.group("lead") + match.group("name") + match.group("sep") + value

    text = _ASSIGNED.sub(assigned, text)
    text = _SHELL_ASSIGNED.sub(shell, text)
    text, found = redact_value(text)
    return text, count + found


def redact_and_cut(text: str, limit: int) -> tuple[str, int]:
    """`redact_text`, then `clip_output` to `limit`; a long text is redacted only around what is
    kept (with a margin, so a secret that crosses the cut is still found whole), and joined
    with clip's marker, since the text between was never redacted and must not be shown."""
    if len(text) > limit:
        text = collapse_base64(text)  # never cut through, and nothing a model can read
    if len(text) <= max(3 * limit, limit + 2 * _MARGIN):  # else the windows would overlap
        shown, count = redact_text(text)
        return clip_output(shown, limit), count
    keep_tail = limit // 3
    head_end = head_cut(text, limit - keep_tail)
    tail_start = tail_cut(text, len(text) - keep_tail)
    head, found_head = redact_text(text[: head_end + _MARGIN])
    tail, found_tail = redact_text(text[tail_start - _MARGIN :])
    keep_tail = len(text) - tail_start
    shown = join_cut(head[:head_end], text[head_end:tail_start], tail[len(tail) - keep_tail :])
    return shown, found_head + found_tail


class MaskingRepr(reprlib.Repr):
    """reprlib's abbreviated repr, with secrets inside containers masked: a dict's values under
    secret-named keys, os.environ anywhere, secret-looking strings."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, 1000, 2000, 200
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdict = 30
        self.masked = 0

    def repr1(self, x: Any, level: int) -> str:
        if is_environment(x):
            self.masked += 1
            return mask_label(x, hint=False)
        plain = class_module(type(x)) in ("builtins", "collections")
        if plain and inherits(x, Mapping, dict, types.MappingProxyType):
            return self._mapping(x, level)
        return super().repr1(x, level)

    def repr_str(self, x: str, level: int) -> str:
        text, found = redact_value(x)
        self.masked += found
        return super().repr_str(text, level)

    def _mapping(self, x: Mapping[Any, Any], level: int) -> str:
        """Like reprlib's repr_dict, for any plain mapping, masking values under secret keys."""
        prefix = "" if type(x) is dict else f"{type(x).__name__}("
        suffix = "" if type(x) is dict else ")"
        if not x:
            return f"{prefix}{{}}{suffix}"
        if level <= 0:
            return f"{prefix}{{...}}{suffix}"
        parts = []
        for index, key in enumerate(x):
            if index >= self.maxdict:
                parts.append("...")
                break
            try:
                value = x[key]
            except Exception:
                continue
            if isinstance(key, str) and is_secret_name(key) and not is_code(value):
                self.masked += 1
                shown = mask_label(value, hint=False)
            else:
                shown = self.repr1(value, level - 1)
            parts.append(f"{self.repr1(key, level - 1)}: {shown}")
        return f"{prefix}{{{', '.join(parts)}}}{suffix}"


def mask_frame(frame: Any) -> tuple[Any, int]:
    """A pandas DataFrame or Series (a head: small) with the cells of secret-named columns and
    rows (`accounts.iloc[0]` is labelled `password`) and secret-looking strings masked, and how
    many cells were."""
    import pandas as pd

    if isinstance(frame, pd.Series):
        shown, count = mask_frame(frame.to_frame())
        return shown.iloc[:, 0], count
    count = 0
    secret_rows = {i for i, label in enumerate(frame.index) if is_secret_name(str(label))}
    masked = frame.copy()
    for position, column in enumerate(frame.columns):
        secret_column = is_secret_name(str(column))
        cells = list(frame.iloc[:, position])
        shown = []
        for row, cell in enumerate(cells):
            if secret_column or row in secret_rows:
                shown.append(mask_label(cell, hint=False))
                count += 1
            elif isinstance(cell, str):
                text, found = redact_value(cell)
                shown.append(text)
                count += found
            else:
                shown.append(cell)
        if any(a is not b for a, b in zip(shown, cells, strict=True)):
            masked.isetitem(position, shown)
    return masked, count
