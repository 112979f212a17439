"""`%copilot policy`: the administrator's policy in force, file by file, and where it was sought."""

from __future__ import annotations

import argparse
from typing import Any

from ... import policy


def show(session: Any, args: argparse.Namespace, settings: Any) -> None:
    """Print every policy file that applies and its rules (or that there is none)."""
    print("copilot: administrator's policy")
    for line in policy.describe():
        print(f"  {line}")


def status_line() -> str:
    """One line for `%copilot`: which policy files limit this server, if any."""
    found = policy.load_policy()
    if found.broken:
        return (
            f"copilot: policy {found.broken[0][0]} cannot be read: every limited choice is "
            "refused (%copilot policy says why)"
        )
    if found.rules:
        return (
            f"copilot: policy in force from {', '.join(found.sources)} (%copilot policy shows it)"
        )
    return "copilot: no administrator's policy"
