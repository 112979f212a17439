"""A pure module of the front end's TypeScript, compiled as it is and called under Node: the
page's logic tested without a browser (cases in, JSON out)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import copilot_nb

FRONTEND = Path(copilot_nb.__file__).parent / "jupyter" / "frontend"
OPTIONS = ["--target", "ES2020", "--module", "ES2020", "--strict", "--noUnusedLocals"]
OPTIONS += ["--moduleResolution", "node", "--skipLibCheck", "--lib", "DOM,ES2020"]
CALLS = r"""
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
import(process.argv[1]).then((m) => {
  process.stdout.write(JSON.stringify(cases.map(([name, args]) => m[name](...args))));
});
"""
"""The default runner: each case `[function name, [arguments]]` called on the module."""


def compile_module(name: str, out: Path) -> Path:
    """src/<name>.ts compiled into `out` as an ES module (`<name>.mjs`); skipped where Node or
    the front end's node_modules are missing (never in CI)."""
    tsc = FRONTEND / "node_modules" / ".bin" / "tsc"
    if shutil.which("node") is None or not tsc.exists():
        if os.environ.get("CI"):
            pytest.fail("CI must have Node and the front end's npm install")
        pytest.skip("needs Node and the front end's node_modules (pip install -e .)")
    source = FRONTEND / "src" / f"{name}.ts"
    subprocess.run(
        [str(tsc), "--outDir", str(out), *OPTIONS, str(source)],
        check=True,
        capture_output=True,
        cwd=FRONTEND,
    )
    compiled = out / f"{name}.mjs"
    (out / f"{name}.js").rename(compiled)
    return compiled


def run_cases(module: Path, cases: list[Any], runner: str = CALLS) -> list[Any]:
    """The results of the cases, by `runner` (a Node script given the module's path)."""
    done = subprocess.run(
        ["node", "-e", runner, str(module)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stdout))
