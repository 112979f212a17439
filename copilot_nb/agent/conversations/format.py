"""The saved conversation's records: one JSON object a line, versioned, pure.

The file opens with a header line (`{"format": "copilot_nb conversation", "version": 1}`); then
each line is a record whose first two keys are `kind` and `conversation`, so a reader can skip
the lines of other conversations, or every message, without parsing them:

- `start`: a conversation begins (`at`, `notebook`).
- `resume`: a kernel took the conversation up again (`at`): the newest such record names the
  conversation `%load_ext` resumes.
- `message`: one message the model sees, as the turn adds it (`turn`, `message`).
- `shown`: what a card showed that the model never sees, for the panel's transcript (`turn`,
  `event`: `file` with `path` and `diff`, `cell` with `notebook`, `cell_id`, `change`, `diff`,
  or `done` with a call's `call_id` and `summary`).
- `turn`: a turn ended: its provenance and usage (`request`, `at`, `seconds`, `model`,
  `provider`, `requests`, `tokens`, `estimated`: how many of the requests were counted from
  our estimate, `premium`, `tools`, `outcome`, `error`), and in a kernel the kernel's
  id, the names the conversation used so far and the agent's new run_code runs (`kernel`,
  `names`, `runs`: `tools/kernel/state.py`).

Messages are written as plain dicts (`message_record`) and read back (`message_from`); a tool
result's images are left out (its text describes them), and the system prompt is not saved (it
is rebuilt from the instruction files when the conversation resumes).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

FORMAT = "copilot_nb conversation"
VERSION = 1
SUFFIX = ".copilot-chat.jsonl"
"""`analysis.ipynb` → `analysis.copilot-chat.jsonl`: beside the cassette `analysis.copilot.jsonl`,
and told apart from it by name."""
OPAQUE = frozenset({"reasoning_signature", "reasoning_items"})
"""Fields a provider signed or encrypted: kept byte for byte (a scrub would break the signature)."""


class NewerFormat(ConfigError):
    """The file was written by a newer copilot_nb: it is read by nothing and written by no one."""


def conversation_path(notebook: str | Path) -> Path:
    """The saved conversations of a notebook: beside it, named after it."""
    path = Path(notebook)
    return path.with_name(path.stem + SUFFIX)


def new_id() -> str:
    """A conversation's or a turn's id: short enough to type (`%copilot resume 3fa2c1d0`)."""
    return secrets.token_hex(4)


def now() -> str:
    """The time a record is written, in UTC to the second (ISO 8601)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def header() -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION}


def check_header(record: Any, path: Path) -> None:
    """Refuse a file this version cannot read: another format, or a newer version."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ConfigError(
            f"{path.name} is not a saved copilot_nb conversation (its first line is not the "
            f"{FORMAT!r} header); move it away, and copilot_nb starts a new file"
        )
    version = record.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise NewerFormat(
            f"{path.name} was written in conversation format {version!r}, newer than the "
            f"{VERSION} this copilot_nb reads; upgrade copilot_nb to resume it (the file is left "
            "as it is, and nothing is saved to it)"
        )


def record(kind: str, conversation: str, **fields: Any) -> dict[str, Any]:
    """A record with `kind` and `conversation` first (readers skip lines by those two keys)."""
    return {"kind": kind, "conversation": conversation, **fields}


def encode(item: Mapping[str, Any]) -> bytes:
    """One line: compact JSON (non-ASCII kept as UTF-8) and a newline."""
    return (json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def line_prefix(kind: str, conversation: str) -> bytes:
    """How every line of this kind of this conversation starts (see `record` and `encode`)."""
    return encode(record(kind, conversation))[:-2] + b","


def message_record(message: Message) -> dict[str, Any] | None:
    """A message as a plain dict, only the fields that are set; None for a system message."""
    if isinstance(message, SystemMessage):
        return None
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, ToolResult):
        out: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "content": message.content,
        }
        if message.is_error:
            out["is_error"] = True
        if message.images:
            out["images_left_out"] = len(message.images)
        return out
    out = {"role": "assistant", "text": message.text}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.raw_arguments or _json(c.arguments)}
            for c in message.tool_calls
        ]
    for name in ("reasoning", "reasoning_signature", "refusal", "finish_reason"):
        if value := getattr(message, name):
            out[name] = value
    if message.reasoning_items:
        out["reasoning_items"] = [dict(item) for item in message.reasoning_items]
    if message.usage is not None:
        out["usage"] = {
            "input_tokens": message.usage.input_tokens,
            "output_tokens": message.usage.output_tokens,
            "raw": dict(message.usage.raw),
        }
    return out


def message_from(data: Mapping[str, Any]) -> Message:
    """A saved message back as the loop keeps it; ConfigError for one this version cannot read."""
    role = data.get("role")
    if role == "user":
        return UserMessage(content=str(data.get("content", "")))
    if role == "tool":
        return ToolResult(
            tool_call_id=str(data.get("tool_call_id", "")),
            name=str(data.get("name", "")),
            content=str(data.get("content", "")),
            is_error=bool(data.get("is_error", False)),
        )
    if role == "assistant":
        usage = data.get("usage")
        return AssistantMessage(
            text=str(data.get("text", "")),
            tool_calls=tuple(
                ToolCall.from_raw(
                    id=str(c.get("id", "")),
                    name=str(c.get("name", "")),
                    raw_arguments=str(c.get("arguments", "")),
                )
                for c in data.get("tool_calls") or ()
            ),
            reasoning=str(data.get("reasoning", "")),
            reasoning_signature=data.get("reasoning_signature"),
            reasoning_items=tuple(data.get("reasoning_items") or ()),
            refusal=str(data.get("refusal", "")),
            finish_reason=data.get("finish_reason"),
            usage=Usage(
                input_tokens=int(usage.get("input_tokens", 0)),
                output_tokens=int(usage.get("output_tokens", 0)),
                raw=usage.get("raw") or {},
            )
            if isinstance(usage, Mapping)
            else None,
        )
    raise ConfigError(f"a saved message has the role {role!r}; expected user, assistant or tool")


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
