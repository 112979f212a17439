"""MCP tools: what our layer adds to a call, next to the official SDK's client on the same server.

One stdio server of our own (tests/mcp_servers/behaviours.py). Side by side in one run:
1. start to first listing: `McpServers.start()` against `async with mcp.Client(...)` + list;
2. one `echo` call: through the agent's path (`ToolSet.call_tool`: argument checks against the
   schema, the time limit, the connection, the result as text) against `client.call_tool`;
3. mapping a 1 MB result to text (`results.tool_output`), alone.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb.tools.mcp.results import tool_output  # noqa: E402
from copilot_nb.tools.mcp.servers import McpServers  # noqa: E402
from copilot_nb.tools.mcp.trust import ServerPins  # noqa: E402
from copilot_nb.tools.registry import ToolSet  # noqa: E402

STARTS = 5
CALLS = 300
ARGS = ["-m", "tests.mcp_servers.behaviours"]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def ours(workspace: Path) -> tuple[list[float], list[float]]:
    entry = {"command": sys.executable, "args": ARGS, "cwd": str(ROOT)}
    (workspace / "config").mkdir(exist_ok=True)  # the user's own mcp.json: started unasked
    (workspace / "config" / "mcp.json").write_text(json.dumps({"mcpServers": {"b": entry}}))
    starts, calls = [], []
    for _ in range(STARTS):
        servers = McpServers(user_dir=lambda: workspace / "config", pins=ServerPins(None))
        servers.configure(workspace)
        began = time.perf_counter()
        await servers.start()
        starts.append(time.perf_counter() - began)
        tools = ToolSet(servers.tools())
        if not calls:
            for _ in range(CALLS):
                began = time.perf_counter()
                output = await tools.call_tool("b__echo", {"text": "hi"}, timeout=30)
                calls.append(time.perf_counter() - began)
                assert output.content.startswith("echo: hi"), output.content
        await servers.stop()
    return starts, calls


async def sdk() -> tuple[list[float], list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(command=sys.executable, args=ARGS, cwd=str(ROOT))
    starts, calls = [], []
    for _ in range(STARTS):
        began = time.perf_counter()
        async with Client(parameters) as client:
            await client.list_tools()
            starts.append(time.perf_counter() - began)
            if not calls:
                for _ in range(CALLS):
                    began = time.perf_counter()
                    await client.call_tool("echo", {"text": "hi"})
                    calls.append(time.perf_counter() - began)
    return starts, calls


def mapping_seconds() -> float:
    from mcp_types import CallToolResult, TextContent

    result = CallToolResult(content=[TextContent(type="text", text="x" * 1_000_000)])
    times = []
    for _ in range(20):
        began = time.perf_counter()
        tool_output(result, label="b__big")
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        our_starts, our_calls = asyncio.run(ours(Path(folder)))
    sdk_starts, sdk_calls = asyncio.run(sdk())
    print(f"\nMCP over stdio (tests/mcp_servers/behaviours.py): {STARTS} starts, {CALLS} calls")
    print(f"{'':<26}{'ours':>10}{'SDK alone':>11}{'ratio':>8}")
    rows = [
        ("start + list, median (s)", statistics.median(our_starts), statistics.median(sdk_starts)),
        ("echo call p50 (ms)", percentile(our_calls, 0.5) * 1e3, percentile(sdk_calls, 0.5) * 1e3),
        (
            "echo call p99 (ms)",
            percentile(our_calls, 0.99) * 1e3,
            percentile(sdk_calls, 0.99) * 1e3,
        ),
    ]
    for label, mine, theirs in rows:
        print(f"{label:<26}{mine:>10.2f}{theirs:>11.2f}{mine / theirs:>7.2f}x")
    added = (percentile(our_calls, 0.5) - percentile(sdk_calls, 0.5)) * 1e3
    print(f"added per call at p50: {added:.2f} ms")
    print(f"1 MB result to text: {mapping_seconds() * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
