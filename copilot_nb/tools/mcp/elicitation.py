"""An MCP server's `elicitation/create`: the server asks the user, through the turn's question.

A server asks in the middle of one of its tool calls. The request becomes a `Question` sent out of
the running call (the asker is the running agent, set by the session for the length of a turn),
so it takes `ask_user`'s path on every surface: buttons and a text box in the cell and the panel,
`input()` in a console, a refusal where nobody is at the keyboard. The answer goes back as the
protocol says: `accept` with the content the schema asks for, `decline` when the user declines,
`cancel` when nobody can answer (no turn, a headless run, the turn ended first).

A form of one field is one question (an enum's values, or yes/no, as its options); a form of
several fields is one question listing them, answered as JSON or one `field: value` per line.
An answer that does not fit the form is asked about again, saying why, at most `ATTEMPTS` times.

A field's `default` (the protocol allows one on every primitive field) is shown with it and is
what the server gets for a field the answer leaves out, as a form shown filled in would send it:
a one-field form offers it as an option, a larger one whose defaults answer it whole offers
`USE_DEFAULTS`. A default that does not fit its own field is not shown and not sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from ...events import DECLINED, AgentEvent, Question

ATTEMPTS = 3
"""Times a question is asked when its answer does not fit the form."""
MAX_MESSAGE = 2000
"""A server's message longer than this is cut: a server cannot flood the question box."""
USE_DEFAULTS = "Use the defaults"
"""The option, and the answer, that accepts a form as its defaults fill it."""
YES = ("yes", "y", "true", "1")
NO = ("no", "n", "false", "0")


Primitive: TypeAlias = str | int | float | bool


class Asker(Protocol):
    """Who can put a question to the user now: the running agent (`Agent`)."""

    current_call_id: str

    def emit(self, event: AgentEvent) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What goes back to the server: `accept` (with `content`), `decline` or `cancel`."""

    action: str
    content: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Field:
    """One field of a requested form (the protocol allows only flat, primitive fields)."""

    name: str
    kind: str
    """string, number, integer or boolean."""
    required: bool
    title: str = ""
    choices: tuple[str, ...] = ()
    default: Primitive | None = None
    """What the server gets when the answer leaves the field out (None: no default)."""

    def describe(self) -> str:
        """How the field reads in a question listing several."""
        kind = f"one of {', '.join(self.choices)}" if self.choices else self.kind
        needed = "required" if self.required else "optional"
        default = f", default {self.shown_default}" if self.default is not None else ""
        title = f": {self.title}" if self.title and self.title != self.name else ""
        return f"- {self.name} ({kind}, {needed}{default}){title}"

    @property
    def shown_default(self) -> str:
        """The default as the user would type it ('' when there is none)."""
        if self.default is None:
            return ""
        if isinstance(self.default, bool):
            return YES[0] if self.default else NO[0]
        return str(self.default)


def fields_of(schema: Mapping[str, Any] | None) -> list[Field]:
    """The fields a requested schema names, in its order."""
    schema = schema or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fields = []
    for name, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        choices = spec.get("enum") or [
            each.get("const") for each in spec.get("oneOf") or () if isinstance(each, Mapping)
        ]
        kind = spec.get("type")
        kind = kind if isinstance(kind, str) else "string"
        named = tuple(str(c) for c in choices if c is not None)
        fields.append(
            Field(
                name=str(name),
                kind=kind,
                required=name in required,
                title=str(spec.get("title") or spec.get("description") or ""),
                choices=named,
                default=_fitting_default(spec.get("default"), kind, named),
            )
        )
    return fields


def _fitting_default(value: Any, kind: str, choices: tuple[str, ...]) -> Primitive | None:
    """A field's default if it fits the field (a server's mistake is not sent back as an
    answer), else None."""
    if choices:
        return value if isinstance(value, str) and value in choices else None
    if isinstance(value, bool):
        return value if kind == "boolean" else None
    if isinstance(value, int):
        return value if kind in ("integer", "number") else None
    if isinstance(value, float):
        return value if kind == "number" else None
    if isinstance(value, str):
        return value if kind not in ("boolean", "integer", "number") else None
    return None


def question_text(server: str, message: str, fields: list[Field]) -> tuple[str, tuple[str, ...]]:
    """The question and its options for a form of `fields`."""
    text = message.strip()[:MAX_MESSAGE] or f"MCP server {server!r} asks for input"
    if len(fields) == 1:
        (field,) = fields
        if field.default is not None:
            text = f"{text}\n\nDefault: {field.shown_default}"
        if field.choices:
            return text, field.choices
        if field.kind == "boolean":
            return text, ("yes", "no")
        return text, (field.shown_default,) if field.default is not None else ()
    if not fields:
        return text, ("OK",)
    listed = "\n".join(field.describe() for field in fields)
    how = "Answer as JSON or one `field: value` per line"
    if any(field.default is not None for field in fields):
        how += " (a field left out takes its default)"
    whole = all(field.default is not None for field in fields if field.required)
    return f"{text}\n\n{how}:\n{listed}", (USE_DEFAULTS,) if whole else ()


def parse_answer(fields: list[Field], answer: str) -> dict[str, Any]:
    """The content for the server, or ValueError saying what does not fit."""
    if not fields:
        return {}
    if len(fields) == 1:
        raw: dict[str, Any] = {fields[0].name: answer.strip()}
    elif answer.strip().lower() in ("", USE_DEFAULTS.lower()):
        raw = {}
    else:
        raw = _pairs(answer)
    content: dict[str, Any] = {}
    for field in fields:
        value = raw.get(field.name)
        if value is None or value == "":
            if field.default is not None:
                content[field.name] = field.default
            elif field.required:
                raise ValueError(f"{field.name} is required")
            continue
        content[field.name] = _value(field, value)
    return content


def _pairs(answer: str) -> dict[str, Any]:
    """A JSON object, else `field: value` lines."""
    text = answer.strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the JSON does not parse ({exc.msg})") from None
        if isinstance(parsed, dict):
            return parsed
    pairs: dict[str, Any] = {}
    for line in text.splitlines():
        name, colon, value = line.partition(":")
        if colon:
            pairs[name.strip().strip("-").strip()] = value.strip()
    if not pairs:
        raise ValueError("write one `field: value` per line, or a JSON object")
    return pairs


def _value(field: Field, value: Any) -> Any:
    """`value` as the field's type, or ValueError."""
    if field.choices:
        match = next((c for c in field.choices if c.lower() == str(value).strip().lower()), None)
        if match is None:
            raise ValueError(f"{field.name} must be one of {', '.join(field.choices)}")
        return match
    if field.kind == "boolean":
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in YES or word in NO:
            return word in YES
        raise ValueError(f"{field.name} must be yes or no")
    if field.kind in ("integer", "number"):
        try:
            number = float(value) if field.kind == "number" else int(str(value).strip())
        except ValueError:
            raise ValueError(
                f"{field.name} must be a{'n integer' if field.kind == 'integer' else ' number'}"
            ) from None
        return number
    return value if isinstance(value, str) else json.dumps(value)


async def elicit(asker: Asker | None, server: str, params: Any) -> Answer:
    """Ask the user what the server asks (`ElicitRequestParams`); the answer for the server."""
    if asker is None:
        return Answer(action="cancel")
    message = str(getattr(params, "message", "") or "")
    if getattr(params, "mode", "form") == "url":
        url = str(getattr(params, "url", ""))
        text = f"{message.strip()[:MAX_MESSAGE]}\n\nOpen this address: {url}".strip()
        fields: list[Field] = []
    else:
        text = message
        fields = fields_of(getattr(params, "requested_schema", None))
    question, options = question_text(server, text, fields)
    retry = ""
    for _ in range(ATTEMPTS):
        answered, reply = await _ask(asker, server, retry + question, options)
        if not answered:
            return Answer(action="decline" if reply in ("", DECLINED) else "cancel")
        try:
            return Answer(action="accept", content=parse_answer(fields, reply))
        except ValueError as exc:
            retry = f"(Your answer {reply[:80]!r} does not fit: {exc}.)\n"
    return Answer(action="cancel")


async def _ask(asker: Asker, server: str, text: str, options: tuple[str, ...]) -> tuple[bool, str]:
    future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
    request = Question(
        call_id=asker.current_call_id or "elicitation",
        name="elicitation",
        arguments={"server": server, "question": text, "options": list(options)},
        summary=text.splitlines()[0][:120] if text.strip() else "a question",
        category="read",
        decision=future,
        question=text,
        options=options,
        asker=f"MCP server {server!r}",
    )
    asker.emit(request)
    return await future
