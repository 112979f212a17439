"""A kernel's first tool call and first notebook read import jsonschema; they no longer wait for
the IRI grammar its optional format checker builds (3 s of CPU), and a user's own
`FormatChecker` still checks IRIs exactly as before. Each case runs in a fresh interpreter: the
test process imported jsonschema long ago."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

GRAMMAR = "rfc3987_syntax.syntax_helpers"
"""The module whose import builds the grammar."""


def fresh(code: str) -> dict[str, object]:
    """What `code` prints as JSON, run in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "first_use",
    [
        "from copilot_nb.tools.schemas.check import schema_library; schema_library()",
        "from copilot_nb.workspace.notebook_file import _nbformat; _nbformat()",
    ],
    ids=["tool-call", "notebook-read"],
)
def test_the_first_tool_call_or_notebook_read_builds_no_iri_grammar(first_use: str) -> None:
    seen = fresh(
        f"""
        import importlib.util, json, sys
        installed = importlib.util.find_spec("rfc3987_syntax") is not None
        {first_use}
        print(json.dumps({{"installed": installed, "jsonschema": "jsonschema" in sys.modules,
                          "grammar": {GRAMMAR!r} in sys.modules,
                          "module": "rfc3987_syntax" in sys.modules}}))
        """
    )
    assert seen == {"installed": True, "jsonschema": True, "grammar": False, "module": False}


def test_a_users_format_checker_still_checks_iris_with_the_real_grammar() -> None:
    samples = ["https://example.org/ünïcode?q=1#frag", "http://exa mple.org/", "::not an iri"]
    seen = fresh(
        f"""
        import json, sys
        from copilot_nb.jsonschema_import import import_jsonschema
        jsonschema = import_jsonschema()
        checker = jsonschema.FormatChecker()
        lazily = [checker.conforms(s, "iri") for s in {samples!r}]
        import rfc3987_syntax
        real = [rfc3987_syntax.is_valid_syntax("iri", s) for s in {samples!r}]
        print(json.dumps({{"lazily": lazily, "real": real,
                          "grammar": {GRAMMAR!r} in sys.modules,
                          "module": type(rfc3987_syntax).__name__ == "module"
                                    and hasattr(rfc3987_syntax, "__path__")}}))
        """
    )
    assert seen == {"lazily": [True, False, False], "real": [True, False, False],
                    "grammar": True, "module": True}  # fmt: skip
