"""`copilot-nb serve`: the proxy outside Jupyter, over the current folder's workspace tools.

The model is `--model` (else `COPILOT_NB_MODEL`, else the default rule: `openai:gpt-4o` with an
`OPENAI_API_KEY`, else the offline demo model). There is no notebook to ask in, so a call that
asks (edits, by default) is denied unless `--yes` allows edits for this server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from ..agent.approvals.policy import ApprovalPolicy
from ..agent.model_strings import default_model_spec, resolve_model
from ..errors import ConfigError
from ..tools import workspace_tools
from ..workspace.workspace import Workspace
from .backend import Backend
from .http.surface import SHELL
from .server import ProxyServer


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="copilot-nb", description="copilot_nb from the shell")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="the OpenAI-compatible proxy and MCP endpoint")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--model", default=None, help="provider:model (default: as in a kernel)")
    serve.add_argument("--workspace", default=".", help="the folder its tools work in")
    serve.add_argument(
        "--allow-execution", action="store_true", help='let clients run tools ("auto", /mcp)'
    )
    serve.add_argument("--yes", action="store_true", help="allow edits without asking")
    acp = commands.add_parser(
        "acp", help="the notebook agent over the Agent Client Protocol (stdio), for editors"
    )
    acp.add_argument("--notebook", default=None, help="the notebook sessions work on")
    acp.add_argument("--connection-file", default=None, help="a running kernel to work in")
    acp.add_argument("--sign-in", action="store_true", help="sign in to GitHub Copilot here")
    options = parser.parse_args(argv)
    if options.command == "acp":
        from ..acp.main import main as acp_main  # the SDK only when asked for

        return acp_main(
            notebook=options.notebook,
            connection_file=options.connection_file,
            sign_in=options.sign_in,
        )
    try:
        workspace = Workspace(os.path.realpath(options.workspace))
        return asyncio.run(_serve(options, workspace))
    except ConfigError as exc:
        print(f"copilot-nb serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


async def _serve(options: argparse.Namespace, workspace: Workspace) -> int:
    spec = options.model or default_model_spec()
    resolve_model(spec)  # an unknown provider fails now, before the server starts
    policy = ApprovalPolicy()
    if options.yes:
        policy = policy.approve_changes()
    tools = workspace_tools(workspace)  # a folder's tools do not change: built once
    backend = Backend(
        model_names=lambda: [spec],
        resolve=resolve_model,
        tools=lambda: tools,
        workspace=lambda: workspace,
        approvals=lambda: policy,
        allow_execution=options.allow_execution,
        surface=SHELL,
    )
    server = ProxyServer(backend=backend, host=options.host, port=options.port)
    await server.start()
    print(
        f"copilot-nb: serving {workspace.root} at {server.url} (OpenAI API under /v1, MCP at /mcp)",
        flush=True,
    )
    print(f"token (shown once): {server.token}", flush=True)
    if warning := server.warning():
        print(f"warning: {warning}", file=sys.stderr)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
