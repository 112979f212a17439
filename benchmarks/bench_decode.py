"""Decoding speed: a ~1 MB stream through raw httpx (the floor), the official SDKs, and ours.

All clients read the same bytes from one loopback server in one run; the table gives each
median time and its ratio to the raw-bytes floor of the same protocol.
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
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.base import collect
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.responses import OpenAIResponses

REPEATS = 7
HI = [{"role": "user", "content": "go"}]


async def raw_bytes(url: str) -> None:
    async with (
        httpx.AsyncClient(timeout=60) as client,
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
    model = OpenAIChat("bench", base_url=f"{base}/v1", api_key="bench")
    message = await collect(model.stream(HI))
    assert len(message.tool_calls) == 3
    await model.aclose()


async def ours_responses(base: str) -> None:
    model = OpenAIResponses("bench", base_url=f"{base}/v1", api_key="bench")
    message = await collect(model.stream(HI))
    assert len(message.tool_calls) == 3
    await model.aclose()


async def ours_anthropic(base: str) -> None:
    model = AnthropicChat("bench", base_url=base, api_key="bench")
    message = await collect(model.stream(HI))
    assert len(message.tool_calls) == 3
    await model.aclose()


async def median_seconds(run: Callable[[], Awaitable[None]]) -> float:
    await run()  # warm up: imports, connection set-up
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        await run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def measure() -> list[tuple[str, str, float, float]]:
    turn = big_turn()
    bodies = {
        "/v1/chat/completions": openai_body(turn),
        "/v1/messages": anthropic_body(turn),
        "/v1/responses": responses_body(turn),
    }
    server = BodyServer(bodies)
    rows: list[tuple[str, str, float, float]] = []
    try:
        for protocol, path, contenders in (
            (
                "openai",
                "/v1/chat/completions",
                (("openai SDK stream helper", openai_sdk), ("copilot_nb OpenAIChat", ours_openai)),
            ),
            (
                "responses",
                "/v1/responses",
                (
                    ("openai SDK responses.stream", responses_sdk),
                    ("copilot_nb OpenAIResponses", ours_responses),
                ),
            ),
            (
                "anthropic",
                "/v1/messages",
                (
                    ("anthropic SDK stream helper", anthropic_sdk),
                    ("copilot_nb AnthropicChat", ours_anthropic),
                ),
            ),
        ):
            size = len(bodies[path]) / 1e6
            floor = await median_seconds(lambda p=path: raw_bytes(server.url + p))
            rows.append((protocol, f"raw httpx bytes ({size:.2f} MB)", floor, 1.0))
            for name, run in contenders:
                seconds = await median_seconds(lambda r=run: r(server.url))
                rows.append((protocol, name, seconds, seconds / floor))
    finally:
        server.close()
    return rows


def main() -> list[tuple[str, str, float, float]]:
    rows = asyncio.run(measure())
    print(f"\nStream decoding (median of {REPEATS}, one loopback server)")
    print(f"{'protocol':<10} {'client':<34} {'ms':>8} {'x floor':>8}")
    for protocol, name, seconds, ratio in rows:
        print(f"{protocol:<10} {name:<34} {seconds * 1000:>8.1f} {ratio:>8.2f}")
    return rows


if __name__ == "__main__":
    main()
