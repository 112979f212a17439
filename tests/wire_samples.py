"""Samples the wire tests share: a conversation with every shape the converters handle, tools
in both spellings, the request snapshot check, and hypothesis strategies for text and JSON cut
into stream pieces."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from copilot_nb.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)

SNAPSHOT = Path(__file__).parent / "data" / "snapshots" / "anthropic_request.json"


_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)),  # any unicode a model can send
    max_size=40,
)


_emoji_text = st.lists(
    st.one_of(_text, st.sampled_from(["😀", "👩‍💻", "🇩🇪", "é", "世界", "\n", "\r\n", "\\", '"'])),
    max_size=6,
).map("".join)


_json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _emoji_text),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_emoji_text, inner, max_size=3),
    max_leaves=8,
)


_name = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,20}", fullmatch=True)


def _pieces(draw: st.DrawFn, text: str, *, min_pieces: int = 1) -> list[str]:
    """Cut `text` at random character offsets (never inside a character: the SDK sends str)."""
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=6))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    pieces = [piece for piece in pieces if piece]
    return pieces or [""] * min_pieces


def conversation() -> list[Any]:
    """A conversation with every shape the converter handles, including OpenAI-style dicts."""
    return [
        SystemMessage(content="You edit notebooks."),
        {"role": "system", "content": "Be brief."},
        UserMessage(content="Fix utils.py and tell me the mean of df.x ✓"),
        AssistantMessage(
            text="Let me look.",
            reasoning="The user wants a fix.",
            reasoning_signature="c2lnbmF0dXJl",
            tool_calls=(
                ToolCall.from_raw(
                    id="toolu_01", name="read_file", raw_arguments='{"path": "utils.py"}'
                ),
                ToolCall.from_raw(
                    id="toolu_02", name="eval", raw_arguments='{"expr": "df.x.mean(",'
                ),
            ),
        ),
        ToolResult(tool_call_id="toolu_01", name="read_file", content="def f():\n    return 1\n"),
        ToolResult(
            tool_call_id="toolu_02", name="eval", content="invalid JSON arguments", is_error=True
        ),
        {"role": "user", "content": [{"type": "text", "text": "Also run the tests."}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "toolu_03",
                    "type": "function",
                    "function": {"name": "run_tests", "arguments": ""},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_03", "content": ""},
        AssistantMessage(reasoning="unsigned reasoning from another provider", text="All green."),
        UserMessage(content="Thanks!"),
    ]


TOOLS: list[Any] = [
    ToolSpec(
        name="read_file",
        description="Read a file in the workspace.",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    ),
    {
        "type": "function",
        "function": {"name": "run_tests", "parameters": {"type": "object", "properties": {}}},
    },
]


def check_snapshot(payload: dict[str, Any]) -> None:
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8"), (
        "set UPDATE_SNAPSHOTS=1 to accept the change"
    )
