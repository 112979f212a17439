"""The chat panel's wire is one set of messages on both sides: every message and op wire.py
defines is declared in wire.d.ts (which TypeScript holds the panel's JavaScript to) with the same
fields, the page shows every op and reads every message the kernel may send, and the kernel reads
and handles every message the page may send. Both files are parsed: no list is kept by hand."""

from __future__ import annotations

import re
import types
from dataclasses import MISSING, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import comm
import pytest

from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel import wire
from copilot_nb.jupyter.panel.widget import ChatPanel, ChatWidget
from tests.panel_front import Front, RecordingComm

PANEL = Path(wire.__file__).parent
DECLARED = PANEL / "wire.d.ts"


def declarations() -> dict[str, str]:
    """Each `type NAME = ...;` of wire.d.ts, by name (comments left out)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", DECLARED.read_text(encoding="utf-8"), flags=re.S)
    found = re.findall(r"\btype\s+(\w+)\s*=\s*(.*?);\s*(?=\btype\b|\binterface\b|$)", text, re.S)
    return {name: " ".join(body.split()) for name, body in found}


DTS = declarations()


def members(union: str) -> list[str]:
    """The names a declared union lists."""
    return [part.strip() for part in DTS[union].split("|") if part.strip()]


def shape(name: str) -> dict[str, tuple[str, bool]]:
    """A declared object type: each field's type and whether it may be left out."""
    body = DTS[name]
    assert body.startswith("{") and body.endswith("}"), f"{name} is not an object type: {body}"
    out: dict[str, tuple[str, bool]] = {}
    for field in filter(None, (f.strip() for f in body[1:-1].split(";"))):
        key, kind = (part.strip() for part in field.split(":", 1))
        optional = key.endswith("?")
        out[key.rstrip("?")] = (resolved(kind), optional)
    return out


def resolved(kind: str) -> str:
    """A declared type with a union of literals spelled out (`FormAction` as its values)."""
    body = DTS.get(kind, "")
    return body if body.startswith("'") else kind


def ts(hint: Any) -> str:
    """How wire.d.ts spells a Python type of wire.py."""
    origin, args = get_origin(hint), get_args(hint)
    if hint in (str, int, bool):
        return {str: "string", int: "number", bool: "boolean"}[hint]
    if origin is Literal:
        return " | ".join(f"'{value}'" for value in args)
    if origin is list:
        return f"{ts(args[0])}[]"
    if origin in (Union, types.UnionType):
        if set(args) == set(get_args(wire.Op)):
            return "Op"
        return " | ".join("null" if a is type(None) else ts(a) for a in args)
    return hint.__name__  # a TypedDict: by its name


def python_shape(cls: Any) -> dict[str, tuple[str, bool]]:
    """A TypedDict's or a dataclass's fields as wire.d.ts would declare them."""
    hints = get_type_hints(cls)
    if is_dataclass(cls):
        out = {f.name: (ts(hints[f.name]), f.default is not MISSING) for f in fields(cls)}
        return {"kind": (f"'{cls.KIND}'", False), **out}
    return {name: (ts(hints[name]), name in cls.__optional_keys__) for name in hints}


def tag(cls: Any, key: str) -> str:
    return cls.KIND if is_dataclass(cls) else get_args(get_type_hints(cls)[key])[0]


@pytest.mark.parametrize(("union", "key"), [("Op", "op"), ("ToPage", "kind"), ("FromPage", "kind")])
def test_every_message_is_declared_on_both_sides_with_the_same_fields(union, key):
    python = {tag(cls, key): cls for cls in get_args(getattr(wire, union))}
    declared = {shape(name)[key][0].strip("'"): name for name in members(union)}
    assert sorted(declared) == sorted(python), f"{union}: wire.py and wire.d.ts differ"
    for kind, cls in python.items():
        name = declared[kind]
        assert name == cls.__name__, f"{kind!r} is {cls.__name__} in wire.py, {name} in wire.d.ts"
        assert shape(name) == python_shape(cls), f"{name}: the fields differ"


def test_the_objects_inside_messages_are_declared_alike():
    for cls in (
        wire.CompletionItem,
        wire.KeyView,
        wire.ProviderView,
        wire.FormView,
        wire.ChosenModel,
        wire.RunRow,
    ):
        assert shape(cls.__name__) == python_shape(cls), cls.__name__


def test_the_synced_traits_are_declared_with_their_types():
    kinds = {"Unicode": "string", "Bool": "boolean", "Int": "number", "List": "string[]"}
    synced = ChatWidget.class_traits(sync=True)
    ours = {
        name: (kinds[type(trait).__name__], False)
        for name, trait in synced.items()
        if not name.startswith("_") and name not in ("layout", "tabbable", "tooltip")
    }
    assert shape("Traits") == ours


def test_the_page_shows_every_op_and_reads_every_message_the_kernel_sends():
    """front.js switches on each op and on each message's kind: one case per declared kind."""
    front = (PANEL / "front.js").read_text(encoding="utf-8")
    cases = set(re.findall(r"case '(\w+)':", front))
    for union, key in (("Op", "op"), ("ToPage", "kind")):
        kinds = {shape(name)[key][0].strip("'") for name in members(union)}
        assert kinds <= cases, f"front.js has no case for {sorted(kinds - cases)}"


def test_the_page_sends_only_messages_it_declares():
    """TypeScript holds every `model.send` to FromPage; this names any kind a script spells."""
    sent = {
        kind
        for path in PANEL.glob("*.js")
        for kind in re.findall(r"\bkind: '(\w+)'", path.read_text(encoding="utf-8"))
    }
    declared = {shape(name)["kind"][0].strip("'") for name in members("FromPage")}
    assert sent and sent <= declared, sorted(sent - declared)


def sample(name: str) -> dict[str, Any]:
    """The smallest message of a declared page-to-kernel type: each field's first value."""
    first = {"string": "", "number": 0, "boolean": False}
    message: dict[str, Any] = {}
    for field, (kind, optional) in shape(name).items():
        if not optional:
            literal = re.match(r"'([^']*)'", kind)
            message[field] = literal.group(1) if literal else first[kind]
    return message


async def test_the_kernel_reads_and_handles_every_message_the_page_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(comm, "create_comm", RecordingComm)
    monkeypatch.chdir(tmp_path)
    panel = ChatPanel(CopilotSession(), model="offline")
    front = Front(panel)
    for name in members("FromPage"):
        message = sample(name)
        assert isinstance(wire.read_message(message), wire.FROM_PAGE[message["kind"]])
        front.say(**message)
    await panel.wait()
    unread = [op["message"] for op in front.of("error") if "page sent" in op["message"]]
    assert unread == []
