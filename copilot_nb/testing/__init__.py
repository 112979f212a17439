"""Offline models for tests and demos: scripted turns, in-process or over a loopback HTTP server."""

from __future__ import annotations

from .script import ScriptedFailure, ScriptedRequest, ScriptedTurn, call, fail, reply
from .scripted import Script, ScriptedModel
from .server import ScriptedServer

__all__ = [
    "Script",
    "ScriptedFailure",
    "ScriptedModel",
    "ScriptedRequest",
    "ScriptedServer",
    "ScriptedTurn",
    "call",
    "fail",
    "reply",
]
