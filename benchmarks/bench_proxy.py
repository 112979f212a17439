"""The proxy under load: 50 streaming clients at once, against the upstream called directly.

`copilot-nb serve` runs as its own process (as a user runs it), in front of a loopback upstream
in another process that answers each request with a reply naming that request, in the exact
bytes of a Chat Completions stream. 50 concurrent
clients (httpx, streaming) send a fixed count of requests, first straight to the upstream, then
through the proxy; every answer is checked against its own request (none lost, none mixed up).
Latency is from sending a request to its `[DONE]`; the proxy's share is the difference of the
two runs' percentiles. The proxy's resident memory is read before and after the proxied run.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb.testing import reply  # noqa: E402
from copilot_nb.testing.openai_wire import openai_sse_events  # noqa: E402

CLIENTS = 50
REQUESTS = 1000
MODEL = "openai:scripted"
TARGET_P99_ADDED_MS = 20.0
errors: list[str] = []
"""The failures of the last run, if any."""


async def run_load(url: str, token: str, clients: int = CLIENTS) -> tuple[list[float], int]:
    """(latencies in seconds, wrong answers) for REQUESTS requests from CLIENTS clients; a
    request that fails is not answered (and is named in `errors`)."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for number in range(REQUESTS):
        queue.put_nowait(number)
    latencies: list[float] = []
    wrong = 0
    errors.clear()
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(
        headers={"authorization": f"Bearer {token}"}, limits=limits, timeout=60
    ) as http:

        async def client() -> None:
            nonlocal wrong
            while not queue.empty():
                number = queue.get_nowait()
                body = {
                    "model": MODEL,
                    "stream": True,
                    "messages": [{"role": "user", "content": f"request {number}"}],
                }
                began = time.perf_counter()
                text = []
                try:
                    async with http.stream(
                        "POST", f"{url}/chat/completions", json=body
                    ) as response:
                        async for line in response.aiter_lines():
                            if line.startswith("data: {"):
                                choices = json.loads(line[6:])["choices"]
                                if choices:
                                    text.append(choices[0]["delta"].get("content") or "")
                except httpx.HTTPError as exc:
                    errors.append(f"request {number}: {type(exc).__name__}: {exc}")
                    continue
                latencies.append(time.perf_counter() - began)
                if not "".join(text).startswith(f"answer to request {number}: "):
                    wrong += 1

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, wrong


def start_proxy(upstream_url: str, folder: str) -> tuple[subprocess.Popen[str], str, str]:
    env = {
        **os.environ,
        "COPILOT_NB_MODEL": MODEL,
        "OPENAI_BASE_URL": upstream_url,
        "OPENAI_API_KEY": "k",
        "COPILOT_NB_CONFIG_DIR": str(Path(folder) / "config"),
    }
    command = [sys.executable, "-m", "copilot_nb.serve.cli", "serve", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--workspace", folder], env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().split(" at ")[1].split()[0]
    token = process.stdout.readline().split(": ")[1].strip()
    return process, f"{url}/v1", token


def rss_mb(pid: int) -> float:
    import psutil

    return float(psutil.Process(pid).memory_info().rss) / 2**20


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def serve_upstream() -> None:
    """The upstream in a process of its own (`--upstream`): the load generator must not slow it.

    An asyncio HTTP/1.1 server sending the exact Chat Completions bytes the project's
    `ScriptedServer` sends (`openai_sse_events`), without its thread per connection, whose
    scheduling under 50 streams at once would be most of what is measured."""
    asyncio.run(_upstream())


async def _upstream() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = json.loads(await reader.readexactly(length))
                asked = body["messages"][-1]["content"]
                turn = reply(f"answer to {asked}: " + "ok " * 10, chunk_size=6)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )
                for event in openai_sse_events(turn, model="scripted", completion_id="c"):
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


def main() -> None:
    upstream = subprocess.Popen(
        [sys.executable, __file__, "--upstream"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert upstream.stdout is not None and upstream.stdin is not None
    upstream_url = upstream.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as folder:
        try:
            asyncio.run(run_load(upstream_url, "k"))  # warm-up
            alone = asyncio.run(run_load(upstream_url, "k", clients=1))[0]
            direct, direct_wrong = asyncio.run(run_load(upstream_url, "k"))
            direct_errors = list(errors)
            process, url, token = start_proxy(upstream_url, folder)
            try:
                asyncio.run(run_load(url, token))  # warm-up: connections, imports, caches
                alone_proxied = asyncio.run(run_load(url, token, clients=1))[0]
                before = rss_mb(process.pid)
                proxied, proxied_wrong = asyncio.run(run_load(url, token))
                proxied_errors = list(errors)
                after = rss_mb(process.pid)
            finally:
                process.terminate()
                process.wait(10)
        finally:
            upstream.stdin.close()
            upstream.wait(10)
    print(f"\nthe proxy: {REQUESTS} streamed requests per run, one client, then {CLIENTS} at once")
    print(f"{'':<22}{'direct':>10}{'proxied':>10}{'added':>10}")
    rows = (
        ("1 client p50 (ms)", alone, alone_proxied, 0.5),
        ("1 client p99 (ms)", alone, alone_proxied, 0.99),
        (f"{CLIENTS} clients p50 (ms)", direct, proxied, 0.5),
        (f"{CLIENTS} clients p99 (ms)", direct, proxied, 0.99),
    )
    for label, theirs_all, mine_all, share in rows:
        mine, theirs = percentile(mine_all, share) * 1e3, percentile(theirs_all, share) * 1e3
        print(f"{label:<22}{theirs:>10.1f}{mine:>10.1f}{mine - theirs:>10.1f}")
    mean_added = (statistics.mean(proxied) - statistics.mean(direct)) * 1e3
    print(
        f"{f'{CLIENTS} clients mean (ms)':<22}{statistics.mean(direct) * 1e3:>10.1f}"
        f"{statistics.mean(proxied) * 1e3:>10.1f}{mean_added:>10.1f}"
    )
    print(
        f"answered: {len(direct)} / {len(proxied)} of {REQUESTS}; wrong or mixed up: "
        f"{direct_wrong} / {proxied_wrong}; proxy memory {before:.0f} MB -> {after:.0f} MB; "
        f"target: p99 added under {TARGET_P99_ADDED_MS:g} ms"
    )
    for label, failures in (("direct", direct_errors), ("proxied", proxied_errors)):
        for failure in failures[:3]:
            print(f"  {label} failed: {failure}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--upstream"]:
        serve_upstream()
    else:
        main()
