"""What a turn costs the user: tokens per request of the eval's tasks, a plot's bytes per wire,
and how much of each follow-up request a provider's prompt cache can reuse.

Every eval task is played by its correct script (the scripted model over loopback, in a real
kernel, as `python -m evals.run --model scripted` does), each task's cassette is read back and
every model request in it is measured: the system prompt, the tool list, the context block and
the tool results, in estimated tokens (`agent/context/tokens.py`, which errs high), summed over
the requests. The repeated prefix of a follow-up request is the characters it begins with alike
with the request before it, as a provider's cache compares them (tools, then system, then the
messages), over its own length. What a turn is billed follows from both: the tokens a prompt
cache cannot serve (each request's part unlike the request sent before it) at full price, the
rest at a tenth.

The plot is a matplotlib figure at the inline backend's size (640x480) and at a high dpi
(3000x1800), as each wire carries it: the bytes of the image in the request, beside the bytes
the same figure costs as base64 text and the line a model without vision reads instead.

`--json PATH` writes the numbers; `--tasks N` plays only the first N tasks.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb.agent.context.tokens import estimate_tokens  # noqa: E402
from copilot_nb.messages import AssistantMessage, Image, ToolCall, ToolResult, UserMessage  # noqa: E402
from copilot_nb.models.base import ModelRequest  # noqa: E402

_BLOCK = re.compile(r"<context>.*?</context>", re.DOTALL)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{200,}")
TARGET_PREFIX_SHARE = 0.9
WHOLE = 0.999
"""A follow-up repeats the whole request before it (all but its closing bracket)."""
CACHED_PRICE = 0.1
"""A cached input token's price as a share of an uncached one's (OpenAI's and Anthropic's
cache reads, for their current models)."""


def requests_of(cassettes: Path) -> dict[str, list[dict[str, Any]]]:
    """Each task's model request bodies, in order, from its cassette."""
    from evals.metrics import MODEL_PATHS, read_entries, rounds_of

    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(cassettes.glob("*.copilot.jsonl")):
        entries = [
            e for e in read_entries(path) if e.get("type", "http") == "http" or "request" in e
        ]
        model = [
            e
            for e in entries
            if str(e.get("request", {}).get("path", "")).rstrip("/").endswith(MODEL_PATHS)
        ]
        bodies = [e["request"].get("body") for e in rounds_of(model)]
        found[path.name.split(".")[0]] = [b for b in bodies if isinstance(b, dict)]
    return found


def parts_of(body: dict[str, Any]) -> dict[str, int]:
    """A Chat Completions body's estimated tokens: system prompt, tools, context block, tool
    results, and the whole request."""
    messages = body.get("messages") or []
    system = sum(estimate_tokens(_text(m)) for m in messages if m.get("role") == "system")
    block = sum(
        estimate_tokens(found)
        for m in messages
        if m.get("role") == "user"
        for found in _BLOCK.findall(_text(m))
    )
    results = sum(estimate_tokens(_text(m)) for m in messages if m.get("role") == "tool")
    tools = estimate_tokens(json.dumps(body.get("tools") or []))
    whole = estimate_tokens(_prompt(body))
    return {
        "system": system,
        "tools": tools,
        "context": block,
        "tool_results": results,
        "request": whole,
        "base64_runs": len(_BASE64.findall(json.dumps(body))),
    }


def prefix_shares(bodies: list[dict[str, Any]], *, of_previous: bool = False) -> list[float]:
    """For each follow-up request, the share of its prompt that repeats the one before (or,
    `of_previous`, the share of the one before that it repeats: what a cache can serve)."""
    shares = []
    for before, after in itertools.pairwise(bodies):
        one, two = _prompt(before), _prompt(after)
        same = next(
            (i for i, (x, y) in enumerate(zip(one, two, strict=False)) if x != y),
            min(len(one), len(two)),
        )
        shares.append(same / max(len(one if of_previous else two), 1))
    return shares


def cache_view(bodies: list[dict[str, Any]]) -> tuple[int, int]:
    """(estimated tokens of all `bodies`, of them the ones a prompt cache could serve): each
    request's prefix alike with the request just before it, in the order they were sent (the
    tools and system prompt repeat across tasks too, as they do across a user's turns)."""
    whole = cached = 0
    before = ""
    for body in bodies:
        prompt = _prompt(body)
        same = next(
            (i for i, (x, y) in enumerate(zip(before, prompt, strict=False)) if x != y),
            min(len(before), len(prompt)),
        )
        whole += estimate_tokens(prompt)
        cached += estimate_tokens(prompt[:same])
        before = prompt
    return whole, cached


def _prompt(body: dict[str, Any]) -> str:
    """The request as a prompt cache reads it: tools, then the system prompt, then messages."""
    return json.dumps(body.get("tools") or []) + json.dumps(body.get("messages") or [])


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def eval_numbers(limit: int | None) -> dict[str, Any]:
    """Play the eval's correct scripts and measure every request they made."""
    from evals.run import run
    from evals.tasks import all_tasks

    folder = Path(tempfile.mkdtemp(prefix="copilot_nb_bench_turn_cost_"))
    names = [t.name for t in all_tasks()][:limit] if limit else None
    results = run("scripted", names=names, record=folder)
    bodies = requests_of(folder)
    totals = {"system": 0, "tools": 0, "context": 0, "tool_results": 0, "request": 0}
    base64_runs = 0
    shares: list[float] = []
    kept: list[float] = []
    count = 0
    for requests in bodies.values():
        for body in requests:
            parts = parts_of(body)
            base64_runs += parts.pop("base64_runs")
            for key, value in parts.items():
                totals[key] += value
            count += 1
        shares += prefix_shares(requests)
        kept += prefix_shares(requests, of_previous=True)
    whole, cached = cache_view([body for requests in bodies.values() for body in requests])
    return {
        "tasks": len(results),
        "passed": sum(r.ok for r in results),
        "requests": count,
        "tokens": totals,
        "per_request": {k: round(v / max(count, 1)) for k, v in totals.items()},
        "base64_runs": base64_runs,
        "prefix_share_min": round(min(shares), 3) if shares else None,
        "prefix_share_mean": round(sum(shares) / len(shares), 3) if shares else None,
        "follow_ups": len(shares),
        "follow_ups_over_target": sum(s >= TARGET_PREFIX_SHARE for s in shares),
        "follow_ups_repeating_all_before": sum(k >= WHOLE for k in kept),
        "prompt_tokens": whole,
        "cacheable_tokens": cached,
        "uncached_per_request": round((whole - cached) / max(count, 1)),
        "billed_per_request": round((whole - cached + CACHED_PRICE * cached) / max(count, 1)),
    }


def across_turns(turns: int = 4) -> dict[str, Any]:
    """A conversation of `turns` turns (each a tool call and an answer) with a context block
    that changes every turn: the repeated prefix of each turn's first request."""
    import asyncio

    from copilot_nb import Agent, tool
    from copilot_nb.agent.loop.run_settings import RunSettings
    from copilot_nb.agent.prompt.system import NOTEBOOK_PROMPT
    from copilot_nb.testing import ScriptedServer, call, reply
    from copilot_nb.tools import ToolSet

    @tool
    def describe(name: str) -> str:
        """Describe a variable.

        Args:
            name: the variable.
        """
        return f"{name}: DataFrame 1,000 rows x 3 columns\n" + "row\n" * 200

    steps = [
        s for n in range(turns) for s in (reply("", call("describe", name=f"df{n}")), reply("ok"))
    ]
    server = ScriptedServer(steps).start()
    blocks = iter(
        "<context>\nNotebook analysis.ipynb:\n"
        + "#%d code | df.plot()\n" * 30 % tuple(range(30))
        + f"Variables: {', '.join(f'df{i}' for i in range(n + 1))}\n</context>"
        for n in range(turns)
    )

    async def block() -> str:
        return next(blocks)

    async def talk() -> None:
        agent = Agent(
            model=server.model(), tools=ToolSet([describe]), system_prompt=NOTEBOOK_PROMPT
        )
        for n in range(turns):
            async for _ in agent.run(f"look at df{n}", settings=RunSettings(context_block=block)):
                pass

    try:
        asyncio.run(talk())
    finally:
        server.stop()
    bodies = [r.body for r in server.requests]
    shares = prefix_shares(bodies)
    firsts = shares[1::2]  # each later turn's first request, after the last turn's last one
    kept = prefix_shares(bodies, of_previous=True)[1::2]
    return {
        "requests": len(bodies),
        "turn_firsts": [round(x, 3) for x in firsts],
        "previous_kept": [round(x, 3) for x in kept],
        "within_turns": [round(x, 3) for x in shares[0::2]],
    }


def figure(width: int, height: int) -> Image:
    from tests.notebook_samples import plot_png

    return Image(media_type="image/png", data=plot_png(width, height))


def image_numbers() -> dict[str, Any]:
    """A plot's bytes in each wire's request, beside its bytes as text."""
    from copilot_nb.models.anthropic.chat import AnthropicChat, messages_request
    from copilot_nb.models.openai.chat import OpenAIChat
    from copilot_nb.models.openai.chat_request import chat_request
    from copilot_nb.models.openai.responses_request import responses_request

    loopback = "http://127.0.0.1:9"
    wires = {
        "chat (gpt-4o)": (OpenAIChat("gpt-4o", base_url=loopback), "chat"),
        "responses (gpt-5)": (OpenAIChat("gpt-5", base_url=loopback), "responses"),
        "anthropic (claude-sonnet-4-5)": (
            AnthropicChat("claude-sonnet-4-5", base_url=loopback),
            "messages",
        ),
        "no vision (gpt-3.5-turbo)": (OpenAIChat("gpt-3.5-turbo", base_url=loopback), "chat"),
    }
    out: dict[str, Any] = {}
    for label, (width, height) in {
        "inline 640x480": (640, 480),
        "high dpi 3000x1800": (3000, 1800),
    }.items():
        plot = figure(width, height)
        row: dict[str, Any] = {"as base64 text": len(plot.data)}
        history = [
            UserMessage(content="what does the plot show?"),
            AssistantMessage(
                tool_calls=(ToolCall.from_raw(id="c", name="run_cell", raw_arguments="{}"),)
            ),
            ToolResult(
                tool_call_id="c",
                name="run_cell",
                content=f"[image/png {width}x{height}]",
                images=(plot,),
            ),
        ]
        bare = [
            *history[:2],
            ToolResult(tool_call_id="c", name="run_cell", content=history[2].content),
        ]
        for wire, (model, kind) in wires.items():
            request = model.with_images(ModelRequest(messages=history))
            empty = ModelRequest(messages=bare)
            build = {
                "chat": lambda r: chat_request("m", r),
                "responses": lambda r: responses_request("m", r),
                "messages": lambda r: messages_request("m", r.messages),
            }[kind]
            row[wire] = len(json.dumps(build(request))) - len(json.dumps(build(empty)))
        out[label] = row
    return out


def table(numbers: dict[str, Any]) -> str:
    lines = []
    ev = numbers.get("eval")
    if ev:
        lines += [
            f"eval: {ev['passed']}/{ev['tasks']} tasks, {ev['requests']} model requests",
            "| estimated tokens | summed | per request |",
            "|---|---:|---:|",
        ]
        for key in ("system", "tools", "context", "tool_results", "request"):
            lines.append(f"| {key} | {ev['tokens'][key]:,} | {ev['per_request'][key]:,} |")
        lines.append(
            f"base64 runs in any request: {ev['base64_runs']}; follow-up requests: "
            f"{ev['follow_ups']}, repeated prefix mean {ev['prefix_share_mean']:.1%}, min "
            f"{ev['prefix_share_min']:.1%}, {ev['follow_ups_over_target']} at or over "
            f"{TARGET_PREFIX_SHARE:.0%}; {ev['follow_ups_repeating_all_before']} repeat the "
            "whole request before them"
        )
        lines.append(
            f"per request, tokens a prompt cache cannot serve: {ev['uncached_per_request']:,}; "
            f"billed as tokens, cached ones at {CACHED_PRICE:g} of the price: "
            f"{ev['billed_per_request']:,}"
        )
    turns = numbers.get("turns")
    if turns:
        lines.append(
            f"{len(turns['turn_firsts']) + 1} turns: each later turn's first request repeats "
            + ", ".join(f"{x:.1%}" for x in turns["turn_firsts"])
            + " of the last one; within turns "
            + ", ".join(f"{x:.1%}" for x in turns["within_turns"])
            + "; of the last turn's last request, each repeats "
            + ", ".join(f"{x:.1%}" for x in turns["previous_kept"])
        )
    images = numbers.get("images") or {}
    if images:
        wires = list(next(iter(images.values())))
        lines += ["", "| plot, bytes | " + " | ".join(wires) + " |"]
        lines.append("|---|" + "---:|" * len(wires))
        for label, row in images.items():
            lines.append(f"| {label} | " + " | ".join(f"{row[w]:,}" for w in wires) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument("--tasks", type=int, help="play only the first N tasks")
    parser.add_argument("--no-eval", action="store_true", help="only the plot's bytes")
    args = parser.parse_args(argv if argv is not None else [])
    numbers: dict[str, Any] = {"images": image_numbers(), "turns": across_turns()}
    if not args.no_eval:
        numbers["eval"] = eval_numbers(args.tasks)
    print("\n== what a turn costs ==")
    print(table(numbers))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
