"""Classifiers that make a read of a secret path ask: `@tool(classify=reads_secret(...))`.

A classifier runs before the registry has parsed and checked the arguments, so it reads them the
way the registry will (a dict, JSON text of one, or nothing). Arguments the registry will refuse
cannot read anything, so they keep the tool's own category; a path the workspace refuses is not a
secret either, since the tool will refuse it too. Anything else that goes wrong raises, and the
registry then asks as for a secret.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...workspace.workspace import Workspace

SECRET = "read-secret"


def call_arguments(arguments: Any) -> Mapping[str, Any] | None:
    """The arguments as `ToolSet.call_tool` will read them, or None when it will refuse them."""
    if arguments is None or (isinstance(arguments, str) and arguments.strip() == ""):
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return arguments if isinstance(arguments, Mapping) else None


def reads_secret(
    workspace: Workspace,
    keys: Iterable[str],
    *,
    default: Callable[[], str | None] | None = None,
) -> Callable[[Mapping[str, Any]], str]:
    """A classifier: `read-secret` when any of these path arguments names a secret, else
    `read`; `default` gives the path used when an argument is missing or null."""
    names = tuple(keys)

    def classify(arguments: Mapping[str, Any]) -> str:
        args = call_arguments(arguments)
        if args is None:
            return "read"
        for key in names:
            value = args.get(key)
            missing = value is None or (isinstance(value, str) and not value.strip())
            if missing and default is not None:
                value = default()
            if isinstance(value, str) and value.strip() and workspace.secret(value) is not None:
                return SECRET
        return "read"

    return classify
