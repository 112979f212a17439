"""Decoding speed: a ~1 MB stream through raw httpx (the floor), the official SDKs, and ours.

All clients read the same bytes from one loopback server in one run. Every run of every client
opens a fresh `httpx.AsyncClient` made the same way (ours get it as `http_client=`), so the floor
and ours pay the same for the client and differ only in what they do with the bytes. The runs are
interleaved (floor, then each contender, REPEATS times), so a busy machine slows all alike; the
table gives each median time and the median of its ratios to the floor run beside it. Ours runs
with each JSON parser this installation has (`fast_json`: msgspec, then the standard library).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import httpx

from benchmarks.streams import (
    BodyServer,
    anthropic_body,
    big_turn,
    openai_body,
    request_json,
    responses_body,
)
from copilot_nb.models import fast_json
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.base import collect
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.responses import OpenAIResponses

REPEATS = 9
TARGET = 1.5
"""Ours at most this many times the floor (median), on every wire."""
LAST_ROUND = {"openai": 1.69, "responses": 1.97, "anthropic": 1.73}
"""Last round's ratio to the floor of ours with the fastest parser, on a quiet machine."""
HI = [{"role": "user", "content": "go"}]


def new_client() -> httpx.AsyncClient:
    """The one way every run gets its client (see the module docstring)."""
    return httpx.AsyncClient(timeout=60)


async def raw_bytes(url: str) -> None:
    async with (
        new_client() as client,
        client.stream("POST", url, content=request_json()) as response,
    ):
        async for _ in response.aiter_bytes():
            pass


async def openai_sdk(base: str) -> None:
    import openai

    client = openai.AsyncOpenAI(api_key="bench", base_url=f"{base}/v1", max_retries=0)
    async with client.chat.completions.stream(model="bench", messages=HI) as stream:
        async for _ in stream:
            pass
        await stream.get_final_completion()
    await client.close()


async def responses_sdk(base: str) -> None:
    import openai

    client = openai.AsyncOpenAI(api_key="bench", base_url=f"{base}/v1", max_retries=0)
    async with client.responses.stream(model="bench", input="go") as stream:
        async for _ in stream:
            pass
        await stream.get_final_response()
    await client.close()


async def anthropic_sdk(base: str) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="bench", base_url=base, max_retries=0)
    async with client.messages.stream(model="bench", max_tokens=1024, messages=HI) as stream:
        async for _ in stream:
            pass
        await stream.get_final_message()
    await client.close()


async def ours_openai(base: str) -> None:
    async with new_client() as client:
        model = OpenAIChat("bench", base_url=f"{base}/v1", api_key="bench", http_client=client)
        message = await collect(model.stream(HI))
    assert len(message.tool_calls) == 3


async def ours_responses(base: str) -> None:
    async with new_client() as client:
        model = OpenAIResponses("bench", base_url=f"{base}/v1", api_key="bench", http_client=client)
        message = await collect(model.stream(HI))
    assert len(message.tool_calls) == 3


async def ours_anthropic(base: str) -> None:
    async with new_client() as client:
        model = AnthropicChat("bench", base_url=base, api_key="bench", http_client=client)
        message = await collect(model.stream(HI))
    assert len(message.tool_calls) == 3


Run = Callable[[], Awaitable[None]]


def with_parser(
    parser: str, run: Callable[[str], Awaitable[None]]
) -> Callable[[str], Awaitable[None]]:
    """`run` with `fast_json` switched to `parser` while it runs."""

    async def switched(base: str) -> None:
        previous = fast_json.use(parser)
        try:
            await run(base)
        finally:
            fast_json.use(previous)

    return switched


async def interleaved(runs: list[Run]) -> tuple[list[float], list[float], list[float]]:
    """Each run's median seconds, the median of its ratios to the first run (the floor) of the
    same round, and the same ratio in CPU time of the loop's thread (what a busy machine's
    descheduling does not inflate; the server's thread is not counted)."""
    for run in runs:
        await run()  # warm up: imports, connection set-up
    times: list[list[float]] = [[] for _ in runs]
    cpu: list[list[float]] = [[] for _ in runs]
    for _ in range(REPEATS):
        for index, run in enumerate(runs):
            started, used = time.perf_counter(), time.thread_time()
            await run()
            times[index].append(time.perf_counter() - started)
            cpu[index].append(time.thread_time() - used)
    medians = [statistics.median(column) for column in times]

    def ratios(table: list[list[float]]) -> list[float]:
        return [
            statistics.median(t / f for t, f in zip(column, table[0], strict=True))
            for column in table
        ]

    return medians, ratios(times), ratios(cpu)


Row = tuple[str, str, float, float, float, str]
"""protocol, client, seconds, ratio to the floor, the same in CPU time, target ("" where none)."""


async def measure(*, sdks: bool = True) -> list[Row]:
    turn = big_turn()
    bodies = {
        "/v1/chat/completions": openai_body(turn),
        "/v1/messages": anthropic_body(turn),
        "/v1/responses": responses_body(turn),
    }
    server = BodyServer(bodies)
    rows: list[Row] = []
    try:
        for protocol, path, sdk, ours in (
            (
                "openai",
                "/v1/chat/completions",
                ("openai SDK stream helper", openai_sdk),
                ("OpenAIChat", ours_openai),
            ),
            (
                "responses",
                "/v1/responses",
                ("openai SDK responses.stream", responses_sdk),
                ("OpenAIResponses", ours_responses),
            ),
            (
                "anthropic",
                "/v1/messages",
                ("anthropic SDK stream helper", anthropic_sdk),
                ("AnthropicChat", ours_anthropic),
            ),
        ):
            size = len(bodies[path]) / 1e6
            names = [f"raw httpx bytes ({size:.2f} MB)"]
            runs: list[Run] = [lambda p=path: raw_bytes(server.url + p)]
            targets = [""]
            for parser in fast_json.available():
                names.append(f"copilot_nb {ours[0]} ({parser})")
                switched = with_parser(parser, ours[1])
                runs.append(lambda r=switched: r(server.url))
                targets.append(f"<= {TARGET}" if parser == fast_json.available()[0] else "")
            if sdks:
                names.append(sdk[0])
                runs.append(lambda r=sdk[1]: r(server.url))
                targets.append("")
            medians, ratios, cpu = await interleaved(runs)
            rows += [
                (protocol, name, seconds, ratio, in_cpu, target)
                for name, seconds, ratio, in_cpu, target in zip(
                    names, medians, ratios, cpu, targets, strict=True
                )
            ]
    finally:
        server.close()
    return rows


def main() -> list[Row]:
    rows = asyncio.run(measure())
    print(f"\nStream decoding (median of {REPEATS} interleaved runs, one loopback server)")
    print(
        f"{'protocol':<10} {'client':<36} {'ms':>8} {'x floor':>8} {'target':>7} {'x CPU':>6}"
        f" {'last round':>10}"
    )
    for protocol, name, seconds, ratio, in_cpu, target in rows:
        last = f"{LAST_ROUND[protocol]:>10.2f}" if target else ""
        print(
            f"{protocol:<10} {name:<36} {seconds * 1000:>8.1f} {ratio:>8.2f} {target:>7}"
            f" {in_cpu:>6.2f} {last}".rstrip()
        )
    return rows


if __name__ == "__main__":
    main()
