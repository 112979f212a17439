"""The built-in offline model: a small rule-based "brain" served over real HTTP on loopback.

With no provider configured, `%%copilot` still works end to end: this model reads the request,
calls the same tools a real model would (list, read, edit), and answers, all through `OpenAIChat`
talking to a `ScriptedServer`, so the demo exercises the exact path a real provider takes.
It understands one kind of request: "read FILE (and change X to "Y")". It never claims what did
not happen: it acts on the file the user named (not on a name the context block mentions), says
so when a call was refused or failed, and answers anything else by saying it is a demo and how to
set a real provider.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .events import ModelEvent
from .models.base import ChatModel, ModelRequest
from .models.openai.chat import OpenAIChat
from .models.provider import Provider
from .testing.script import ScriptedRequest, ScriptedTurn, call, reply
from .testing.server import ScriptedServer
from .text import clip

OFFLINE_NOTE = (
    "_Offline demo model: no provider is configured. Set `COPILOT_NB_MODEL` "
    "(e.g. `openai:gpt-4o`, `anthropic:claude-sonnet-4-5`, `ollama:qwen3`) or use `--model`._"
)

_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})\b")
_TARGET = re.compile(r"""\bto\s+["“'`]([^"”'`]+)["”'`]""")
_LITERAL = re.compile(r"""(["'])((?:(?!\1).)*)\1""")
_NUMBERED = re.compile(r"^\s*\d+\t", re.MULTILINE)
_CONTEXT = re.compile(r"\A\s*<context>.*?</context>\s*", re.DOTALL)
"""The turn's context block, sent before the request (`tools/context_block.py`): the open
notebook's name is there, but it is not what the user asked about."""

DEMO_REPLY = (
    "I am the offline demo model, not a real one: no provider is set, so all I can do is read "
    "a file you name and change a quoted string in it (try: "
    '_Read hello.py and change the greeting to "hello, notebook"_).\n\n'
    "For real answers, set a provider and run the cell again: `%env OPENAI_API_KEY=sk-...` "
    "for OpenAI, `%env COPILOT_NB_MODEL=anthropic:claude-sonnet-4-5` with `ANTHROPIC_API_KEY`, "
    "`%env COPILOT_NB_MODEL=ollama:qwen3` for a local Ollama, or `%copilot login` for GitHub "
    "Copilot."
)
"""The answer to anything the demo cannot do: what it is, and what to do instead."""


def offline_reply(request: ScriptedRequest) -> ScriptedTurn:
    """Decide the next step of the demo from the conversation so far, like a (very small) model."""
    messages = request.messages
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    prompt = _CONTEXT.sub("", str(messages[start].get("content") or "") if messages else "")
    calls = {
        c["id"]: c
        for m in messages[start:]
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    }
    results = [
        (calls.get(m.get("tool_call_id"), {}), str(m.get("content", "")))
        for m in messages[start:]
        if m.get("role") == "tool"
    ]
    if not results:
        return _first_step(prompt, declared_tools(request))
    last_call, last_output = results[-1]
    name = last_call.get("function", {}).get("name", "")
    arguments = _arguments(last_call)
    if _failed(name, last_output):
        happened = "was refused" if "denied" in last_output[:200] else "failed"
        quoted = "\n> ".join(clip(last_output, 2000).splitlines())
        return reply(f"The `{name}` call {happened}, so nothing was changed:\n\n> {quoted}")
    if name == "read_file":
        return _after_read(prompt, arguments.get("path", ""), last_output, declared_tools(request))
    if name == "edit_file":
        return reply(
            f"Done: in `{arguments.get('path')}` I replaced `{arguments.get('old_str')}` with "
            f"`{arguments.get('new_str')}`."
        )
    if name == "list_directory":
        entries = [line for line in last_output.splitlines() if line.strip()]
        shown = "\n".join(f"- `{line.strip()}`" for line in entries[:20])
        return reply(f"The workspace holds:\n\n{shown}")
    return reply(f"`{name}` returned:\n\n```\n{clip(last_output, 2000)}\n```")


def declared_tools(request: ScriptedRequest) -> frozenset[str]:
    """The tools the request offers: the only ones a model may call (a client of the proxy that
    declared none, or others, must never get a call it cannot run)."""
    tools = request.body.get("tools") or []
    return frozenset(
        str(t["function"].get("name", ""))
        for t in tools
        if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
    )


def _step(declared: frozenset[str], text: str, name: str, **arguments: Any) -> ScriptedTurn:
    """`text` with a call of `name`, when the request offers that tool; else the text alone,
    saying which tool the demo would have used."""
    if name in declared:
        return reply(text, call(name, **arguments))
    return reply(f"{text.rstrip()} (I would use a `{name}` tool, but none was offered.)")


def _first_step(prompt: str, declared: frozenset[str]) -> ScriptedTurn:
    match = _FILE.search(prompt)
    if match:
        path = match.group(1)
        return _step(declared, f"Let me read `{path}`.\n\n", "read_file", path=path)
    return reply(DEMO_REPLY)


def _failed(name: str, output: str) -> bool:
    """Whether a tool's result is a refusal or an error: ours start with the tool's name
    (`edit_file: the user denied this call`, `read_file: no such file`)."""
    if name == "edit_file":
        return not output.startswith("edited ")  # its one way of saying it made the edit
    head = output.lstrip()[:40].lower()
    return head.startswith((f"{name}:", "error", "cancelled")) or "error" in head


def _after_read(prompt: str, path: str, output: str, declared: frozenset[str]) -> ScriptedTurn:
    content = _NUMBERED.sub("", output)
    target = _TARGET.search(prompt)
    literal = _LITERAL.search(content)
    if target and literal:
        quote, old = literal.group(1), literal.group(0)
        new = f"{quote}{target.group(1)}{quote}"
        if old != new:
            return _step(
                declared,
                f"`{path}` contains {old}; changing it to {new}.\n\n",
                "edit_file",
                path=path,
                old_str=old,
                new_str=new,
            )
    lines = [line for line in content.splitlines() if line.strip()]
    names = re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", content, re.MULTILINE)
    defines = f" It defines {', '.join(f'`{n}`' for n in names)}." if names else ""
    unchanged = (
        f" I found no quoted string in it to change to “{target.group(1)}”, so I changed nothing."
        if target
        else ""
    )
    return reply(
        f"`{path}` has {len(lines)} non-empty lines.{defines}{unchanged}\n\n"
        "_That is all the offline demo can tell: set a provider for a real answer._"
    )


def _arguments(tool_call: Mapping[str, Any]) -> dict[str, Any]:
    try:
        parsed = json.loads(tool_call.get("function", {}).get("arguments") or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


class OfflineModel(ChatModel):
    """The offline demo as a Model: an `OpenAIChat` talking to a loopback server it owns, on an
    endpoint of the `offline` provider. It shows no `endpoint` of its own: what it sends never
    leaves this process's loopback, and a cassette never records or replays it."""

    def __init__(self) -> None:
        self.name = PROVIDER.default_model
        self.server = ScriptedServer(responder=offline_reply, model_name=self.name)
        self._chat: OpenAIChat | None = None

    @property
    def provider(self) -> str:
        return PROVIDER.name

    def _model(self) -> OpenAIChat:
        if self._chat is None:
            self.server.start()
            endpoint = PROVIDER.endpoint(self.name, base_url=self.server.url)
            self._chat = OpenAIChat(self.name, endpoint=endpoint)
        return self._chat

    def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self._model()._stream(request)

    async def aclose(self) -> None:
        if self._chat is not None:
            await self._chat.aclose()
            self.server.stop()
            self._chat = None


PROVIDER = Provider(
    name="offline",
    chat=lambda _endpoint: OfflineModel(),
    sign_in="It needs no sign-in: it answers on this machine. Set COPILOT_NB_MODEL for a real one.",
    window="name",
    default_model="offline-demo",
    note=OFFLINE_NOTE,
)
"""The offline demo's row: `offline` as a model string (`demo` too: `agent/model_spec.OFFLINE`);
it names no model."""
