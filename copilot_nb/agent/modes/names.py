"""The names of the modes a turn runs in, apart from how they run (`run.py`): the magics' traits
and options need the names at `%load_ext`, which must not load the tools."""

from __future__ import annotations

from typing import Literal

TurnMode = Literal["ask", "plan", "agent"]
MODES: tuple[TurnMode, ...] = ("ask", "plan", "agent")
