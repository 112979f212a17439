"""Find the value a variable path names, without letting it wander out of the user's data.

A path starts at one of the user's variables and takes attribute (`.coef_`) and item
(`["x"]`, `[0]`) steps. It may not start at a module, at IPython's own names (`In`, `Out`,
`get_ipython`, `exit`, `_`, `__builtins__`), and no step may take a dunder attribute or land on a
module, a frame, code, or a namespace dictionary: those are how `subprocess.os.environ` or
`f.__globals__['os']` would reach the process's secrets from an innocent variable. The lookup also
says whether what it found is a secret (a secret-sounding name on the way, or `os.environ`).
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ...errors import ToolError
from ..redaction.masking import is_code, is_environment, is_secret_name
from ..views.static_view import inherits, instance_dict

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython puts in the user namespace that are not the user's variables."""
MAX_PATH_CHARS = 300
MAX_STEPS = 20
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATTRIBUTE = re.compile(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_ITEM = re.compile(r"""\s*\[\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+)\s*\]""")
_UNSAFE = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)
Step = tuple[Literal["attribute", "item"], str | int]


@dataclass(frozen=True, kw_only=True)
class Found:
    """What a path led to, and why it must be masked ("" when it need not)."""

    value: Any
    secret: str = ""


def is_internal(name: str, value: Any, hidden: Mapping[str, Any]) -> bool:
    """IPython's names and `_` names, and names IPython set that the user has not rebound."""
    if name.startswith("_") or name in IPYTHON_NAMES:
        return True
    return name in hidden and hidden[name] is value


def parse_path(path: str, tool: str) -> tuple[str, list[Step]]:
    """`cfg["db"].host` as its first name and its steps: ("item", "db"), ("attribute", "host")."""
    text = path.strip()
    if len(text) > MAX_PATH_CHARS:
        raise ToolError(f"{tool}: the path is longer than {MAX_PATH_CHARS} characters")
    first = _NAME.match(text)
    if first is None:
        raise ToolError(
            f"{tool}: {path!r} is not a variable name; give a name like 'df', optionally "
            "followed by attributes and items: 'model.coef_', 'cfg[\"db\"]', 'rows[0]'"
        )
    steps: list[Step] = []
    position = first.end()
    while position < len(text):
        if len(steps) >= MAX_STEPS:
            raise ToolError(f"{tool}: the path has more than {MAX_STEPS} steps")
        attribute = _ATTRIBUTE.match(text, position)
        item = _ITEM.match(text, position)
        if attribute is not None:
            steps.append(("attribute", attribute.group(1)))
            position = attribute.end()
        elif item is not None:
            steps.append(("item", ast.literal_eval(item.group(1))))
            position = item.end()
        else:
            raise ToolError(
                f"{tool}: cannot read {path!r} after {text[:position]!r}; use attributes "
                "(.name) and items with a literal key (['key'] or [0]), no calls or expressions"
            )
    return first.group(), steps


def lookup(
    namespace: Mapping[str, Any],
    path: str,
    *,
    hidden: Mapping[str, Any],
    known: list[str],
    tool: str = "inspect_variable",
) -> Found:
    """The value `path` names in `namespace`, or a ToolError saying why it may not be read."""
    first, steps = parse_path(path, tool)
    if first not in namespace:
        close = difflib.get_close_matches(first, known, n=3, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        listed = ", ".join(close + [k for k in known if k not in close][:30]) or "none"
        raise ToolError(f"{tool}: no variable named {first!r}{hint}; user variables: {listed}")
    value = namespace[first]
    if is_internal(first, value, hidden):
        raise ToolError(
            f"{tool}: {first!r} is IPython's or private, not a user variable; "
            "get_history shows the kernel's inputs and outputs"
        )
    shown = first
    _check_value(shown, value, namespace, tool)
    secret = _secret_reason(first, value)
    for kind, key in steps:
        name = key if isinstance(key, str) else ""
        if kind == "attribute":
            if name.startswith("__") and name.endswith("__"):
                raise ToolError(
                    f"{tool}: {shown}.{name} is a dunder attribute; the variable tools show "
                    "the user's data, not Python's internals"
                )
            shown = f"{shown}.{name}"
        else:
            shown = f"{shown}[{key!r}]"
        try:
            value = getattr(value, name) if kind == "attribute" else value[key]
        except Exception as exc:
            raise ToolError(
                f"{tool}: {shown} cannot be read ({type(exc).__name__}: {exc})"
            ) from None
        _check_value(shown, value, namespace, tool)
        secret = secret or _secret_reason(name, value)
    return Found(value=value, secret="" if is_code(value) else secret)


def _secret_reason(name: str, value: Any) -> str:
    if is_environment(value):
        copy = "" if inherits(value, os._Environ) else "a copy of "
        return f"it is {copy}the process environment (os.environ)"
    if name and is_secret_name(name) and not is_code(value):
        return f"its name ({name}) says it holds a secret"
    return ""


def _check_value(shown: str, value: Any, namespace: Mapping[str, Any], tool: str) -> None:
    """Refuse a step onto a module, frame, code, traceback, or a namespace's dictionary."""
    if inherits(value, *_UNSAFE):
        kind = "a module" if inherits(value, types.ModuleType) else f"a {type(value).__name__}"
        raise ToolError(
            f"{tool}: {shown} is {kind}; the variable tools show the user's own variables, "
            "not what modules or the interpreter hold (read library code with the file tools)"
        )
    if inherits(value, dict) and (value is namespace or _is_module_namespace(value)):
        raise ToolError(
            f"{tool}: {shown} is a namespace dictionary (globals); inspect the variables in it "
            "by name instead"
        )


def _is_module_namespace(value: dict[Any, Any]) -> bool:
    return any(instance_dict(m) is value for m in list(sys.modules.values()))
