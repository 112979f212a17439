"""Importing jsonschema without building an IRI grammar nobody asked for.

jsonschema's import takes `rfc3987_syntax` when it is installed (JupyterLab installs it), and that
module builds an Earley grammar for IRIs as it is imported: 3 s of CPU on a CI core, paid by the
first tool call or notebook read of every kernel, for a format checker copilot_nb never uses
(its validators take no `format_checker`). So jsonschema is imported with a stand-in in that
module's place: the one function jsonschema takes from it, which imports the real module when a
user's own `FormatChecker` first checks an IRI. The stand-in leaves `sys.modules` as soon as
jsonschema has it, so `import rfc3987_syntax` anywhere after gets the real module.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType

GRAMMAR_MODULE = "rfc3987_syntax"
_importing = threading.Lock()


def import_jsonschema() -> ModuleType:
    """`jsonschema`, imported (once) with the IRI grammar left for its first use."""
    with _importing:
        if "jsonschema" not in sys.modules and _grammar_pending():
            stand_in = _stand_in()
            sys.modules[GRAMMAR_MODULE] = stand_in
            try:
                importlib.import_module("jsonschema")
            finally:
                if sys.modules.get(GRAMMAR_MODULE) is stand_in:
                    del sys.modules[GRAMMAR_MODULE]
    return importlib.import_module("jsonschema")


def _grammar_pending() -> bool:
    """The grammar's module is installed and not imported yet."""
    if GRAMMAR_MODULE in sys.modules:
        return False
    try:
        return importlib.util.find_spec(GRAMMAR_MODULE) is not None
    except (ImportError, ValueError):
        return False


def _stand_in() -> ModuleType:
    module = ModuleType(GRAMMAR_MODULE, "copilot_nb's stand-in until an IRI is checked")

    def is_valid_syntax(term: str, value: str) -> bool:
        """The real `rfc3987_syntax.is_valid_syntax`, imported at this first call."""
        real: bool = importlib.import_module(GRAMMAR_MODULE).is_valid_syntax(term, value)
        return real

    module.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    return module
