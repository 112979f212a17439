"""`copilot-nb acp`: serve the agent over stdio, where stdout carries ACP and nothing else.

The real stdout is taken for the protocol before anything runs, and file descriptor 1 then
points at stderr: a stray `print`, a library's warning or a kernel started from here (which
inherits our descriptors) writes to the log, never into the protocol's stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import IO, Any, cast


def main(
    *, notebook: str | None = None, connection_file: str | None = None, sign_in: bool = False
) -> int:
    """Run the agent until the editor closes stdin: sessions on `notebook` (else each names
    its own) in new kernels, or in the running kernel of `connection_file`."""
    try:
        import acp  # noqa: F401
    except ImportError:
        print(
            "copilot-nb acp: the Agent Client Protocol SDK is not installed; "
            "install it with `pip install 'copilot_nb[acp]'`",
            file=sys.stderr,
        )
        return 2
    if sign_in:  # the editor's terminal auth method: a person at a terminal, not the protocol
        from .sign_in import sign_in_here

        return sign_in_here()
    level = os.environ.get("COPILOT_NB_ACP_LOG", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=level, format="copilot-nb acp: %(message)s")
    protocol = _take_stdout()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(protocol, notebook, connection_file))
    return 0


def _take_stdout() -> IO[bytes]:
    """The protocol's own copy of stdout; fd 1 and `sys.stdout` now go to stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


async def _serve(protocol: IO[bytes], notebook: str | None, connection_file: str | None) -> None:
    from acp import run_agent
    from acp.stdio import _WritePipeProtocol  # the SDK's drain-aware protocol for a pipe

    from .agent import CopilotAgent

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    write_protocol = _WritePipeProtocol()
    transport, _ = await loop.connect_write_pipe(lambda: write_protocol, protocol)
    writer: Any = asyncio.StreamWriter(transport, write_protocol, None, loop)
    agent = CopilotAgent(notebook=notebook, connection_file=connection_file)
    try:
        # the SDK answers "method not found" for what we do not define (fork, terminals), so
        # the agent implements the part of its protocol it offers, not every method
        # `session/resume` is among the SDK's unstable methods: offered, as the capability says
        await run_agent(cast("Any", agent), writer, reader, use_unstable_protocol=True)
    finally:
        await agent.close()
