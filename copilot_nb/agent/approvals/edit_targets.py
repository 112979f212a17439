"""The paths an edit call names, and whether one of them does something later.

In review mode an edit applies before anyone looks at it, which is safe for a cell or an
ordinary file (Keep or Undo in place, nothing happened meanwhile) but not for a file that runs
code later, runs in CI or instructs future agents (`workspace/later_effects.py`): the user could
run `make` or `pytest` before reviewing. Such a call asks first, as it would without review.
"""

from __future__ import annotations

import posixpath
from typing import Any

PATH_KEYS = ("path", "destination", "source")
"""Arguments that name a path; `source` only beside `destination` (a cell's `source` is code)."""


def edit_targets(arguments: Any) -> list[str]:
    """Every path an edit call names, normalised as the model wrote it."""
    args = arguments if isinstance(arguments, dict) else {}
    keys = PATH_KEYS if "destination" in args else PATH_KEYS[:1]
    paths = [args.get(key) for key in keys]
    from ...tools.files.patch import is_patch, patch_paths  # late: %load_ext stays light

    if is_patch(args.get("input")):  # apply_patch: every file the patch names
        paths += patch_paths(args["input"])
    return [
        posixpath.normpath(value.strip().replace("\\", "/"))
        for value in paths
        if isinstance(value, str) and value.strip()
    ]


def acts_later(arguments: Any) -> bool:
    """Whether an edit call writes a file that does something later (runs code, runs in CI,
    instructs future agents)."""
    from ...workspace.later_effects import later_effect

    return any(later_effect(path) is not None for path in edit_targets(arguments))
