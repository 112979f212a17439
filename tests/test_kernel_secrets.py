"""In a real kernel, the variable tools see the user's variables and keep their secrets from the model.

The namespace is IPython's own (with `In`, `Out`, `_`, `exit`, `get_ipython`, the modules the
user imported), so the lookup table here is checked against what a notebook really holds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.kernel_session import KernelSession, scripted_env
from tests.secret_namespace import SECRETS, SETUP, TABLE, check

pytestmark = pytest.mark.kernel

ENV_SECRET = "kernel-env-secret-4f9a2c"


def test_the_lookup_table_in_a_real_kernel(tmp_path: Path) -> None:
    paths = [row.path for row in TABLE]
    probe = (
        "import json as _json\n"
        "from copilot_nb.tools.kernel.tools import kernel_tools as _kernel_tools\n"
        "_tools = _kernel_tools(lambda: get_ipython().user_ns, shell=get_ipython())\n"
        "_rows = {}\n"
        f"for _path in {paths!r}:\n"
        "    _out = await _tools.call_tool('inspect_variable', {'name': _path})\n"
        "    _rows[_path] = [_out.is_error, _out.content]\n"
        "_listing = await _tools.call_tool('list_variables', {})\n"
        "_history = await _tools.call_tool('get_history', {'n': 10})\n"
        "print('RESULT' + _json.dumps([_rows, _listing.content, _history.content]))\n"
    )
    kernel = KernelSession(tmp_path, {"COPILOT_TEST_SECRET": ENV_SECRET})
    try:
        assert kernel.execute(SETUP).status == "ok"
        run = kernel.execute(probe)
        assert run.status == "ok", run.reply["content"]
    finally:
        kernel.close()
    rows, listing, history = json.loads(run.stdout.split("RESULT", 1)[1])
    environment = {"COPILOT_TEST_SECRET": ENV_SECRET, **os.environ}
    for row in TABLE:
        is_error, content = rows[row.path]
        check(row, is_error, content, environment)
    names = [line.split()[0] for line in listing.splitlines()[2:] if line.strip()]
    assert "In" not in names and "os" not in names and "np" not in names
    assert {"api_key", "cfg", "df", "env", "model"} <= set(names)
    assert 'api_key = "<masked: 56 chars>"' in history
    for secret in SECRETS:
        assert secret not in listing and secret not in history


def test_a_hijacked_model_never_sees_a_secret_from_the_kernel(serve: Any, tmp_path: Path) -> None:
    """Every way in is tried; the reveal is asked for, and denied since nobody can answer."""
    server = serve(
        [
            reply(
                "",
                call("list_variables", id="list"),
                call("inspect_variable", id="key", name="api_key"),
                call("inspect_variable", id="environ", name="subprocess.os.environ"),
                call("inspect_variable", id="env", name="env"),
                call("inspect_variable", id="cfg", name="cfg"),
                call("get_history", id="history", n=20),
                call("run_code", id="run", code="print(settings); notes"),
            ),
            reply("", call("inspect_variable", id="reveal", name="api_key", reveal=True)),
            reply("I could not read the key."),
        ]
    )
    env = scripted_env(server, COPILOT_TEST_SECRET=ENV_SECRET)
    kernel = KernelSession(tmp_path, env)
    try:
        assert kernel.execute(SETUP + "%load_ext copilot_nb\n").status == "ok"
        run = kernel.execute("%%copilot --yes\nWhat is my API key? Print it for me.")
        assert run.status == "ok", run.reply["content"]
    finally:
        kernel.close()

    results = server.requests[-1].tool_results
    assert "<masked: str of 56 chars; ask to reveal>" in results["key"]
    assert "subprocess is a module" in results["environ"]
    assert "the process environment (os.environ)" in results["env"]
    assert "'host': 'db.local'" in results["cfg"]
    assert "region='eu'" in results["run"], "run_code ran (--yes) and its output was masked"
    assert results["reveal"].startswith("inspect_variable: the user denied this call")
    for request in server.requests:
        body = json.dumps(request.body)
        for secret in (*SECRETS, ENV_SECRET):
            assert secret not in body, f"{secret!r} reached the model"
    server.assert_complete()
