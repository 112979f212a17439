"""What a recording of the agent's traffic may hold: one set of rules for every file we write.

A cassette (and, in time, a saved conversation) keeps requests and responses so they can be read
and replayed; none of it may keep a secret. Three rules, each a pure function of what is written:

- `Scrubber`: the machine's paths become placeholders and secrets become `[redacted]`, in every
  string: the keys in the environment, whatever their form, and every `text.SECRET_VALUE` format.
- `scrub_stream`: a streamed response sends a reply in pieces, and a key split across two pieces
  passes a scan of each. The pieces of each stream (text, tool arguments, reasoning) are joined,
  secrets found in the joined text, and the parts of each piece that belong to a secret removed
  (the first keeps `[redacted]`), so the reassembled reply reads as a scrubbed whole reply would,
  and the same decoders still replay it.
- `withhold_results`: a secret file's contents the user approved reading reach the model, not the
  recording: the tool result is replaced by a placeholder in every request body that carries it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..text import SECRET_VALUE, may_hold_secret

REDACTED = "[redacted]"
WORKSPACE = "<workspace>"
HOME = "<home>"
WITHHELD = "[secret content the user approved reading: not recorded]"
DURATION = re.compile(r"\bin \d+\.\d+ s\b")
"""How long a run took, as our tools tell the model (`ran cell … in 0.53 s`): never the same twice,
so a recording compares (and keeps) it as `in <seconds> s`."""
SECRET_ENVIRONMENT = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "COPILOT_NB_GITHUB_TOKEN",
)
"""Keys in the environment whose values are redacted wherever they appear, whatever their form."""


@dataclass(frozen=True)
class Scrubber:
    """Replaces the machine's paths with placeholders and secrets with `[redacted]` in text."""

    places: tuple[tuple[str, str], ...]
    secrets: tuple[str, ...]

    @classmethod
    def here(cls, environ: Mapping[str, str] | None = None) -> Scrubber:
        """For this process now: the working directory (the workspace) and home, longest first."""
        env = os.environ if environ is None else environ
        cwd = os.getcwd()
        places = {os.path.realpath(cwd): WORKSPACE, cwd: WORKSPACE}
        home = os.path.expanduser("~")
        if len(home) > 1:
            places.setdefault(os.path.realpath(home), HOME)
            places.setdefault(home, HOME)
        ordered = sorted(places.items(), key=lambda item: -len(item[0]))
        secrets = tuple(v for name in SECRET_ENVIRONMENT if len(v := env.get(name, "")) >= 8)
        return cls(tuple(ordered), secrets)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        if may_hold_secret(value):
            value = SECRET_VALUE.sub(REDACTED, value)
        for place, name in self.places:
            value = value.replace(place, name)
        return DURATION.sub("in <seconds> s", value)

    def json(self, value: Any) -> Any:
        """`value` with every string scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        return value

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where secrets are in `text`: (start, end) pairs, merged where they overlap."""
        found = [(m.start(), m.end()) for m in SECRET_VALUE.finditer(text)]
        for secret in self.secrets:
            start = text.find(secret)
            while start >= 0:
                found.append((start, start + len(secret)))
                start = text.find(secret, start + 1)
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged


# --- streamed responses ------------------------------------------------------------------------

DELTA_FIELDS = frozenset(
    {"content", "arguments", "text", "partial_json", "thinking", "reasoning", "refusal", "delta"}
    | {"reasoning_content", "reasoning_text"}
)
"""The fields a provider streams a reply's pieces in (Chat Completions, Responses, Messages)."""
STREAM_KEYS = frozenset({"index", "output_index", "content_index", "summary_index", "item_id"})
"""Fields that tell one stream of pieces from another (a second tool call, a second block)."""


def scrub_stream(text: str, scrubber: Scrubber) -> str:
    """A streamed body (server-sent events, or JSON lines) with every secret removed from the
    joined pieces of each stream; lines that carry no piece are left as they are."""
    lines = text.splitlines(keepends=True)
    events: dict[int, Any] = {}
    groups: dict[tuple[Any, ...], list[tuple[int, list[Any], Any]]] = {}
    for number, line in enumerate(lines):
        payload = line[5:] if line.startswith("data:") else line
        if not payload.strip().startswith("{"):
            continue
        try:
            event = json.loads(payload)
        except ValueError:
            continue
        events[number] = event
        for key, holder, field in _pieces(event, (), ()):
            groups.setdefault(key, []).append((number, holder, field))
    changed: set[int] = set()
    for pieces in groups.values():
        changed |= _scrub_group(pieces, scrubber)
    for number in sorted(changed):
        line = lines[number]
        ending = line[len(line.rstrip("\r\n")) :]
        prefix = "data: " if line.startswith("data:") else ""
        lines[number] = prefix + json.dumps(events[number], ensure_ascii=False) + ending
    return "".join(lines)


def _pieces(
    value: Any, path: tuple[str, ...], streams: tuple[Any, ...]
) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """(stream key, the dict or list holding a piece, its field) for each streamed piece."""
    if isinstance(value, list):
        for item in value:
            yield from _pieces(item, path, streams)
        return
    if not isinstance(value, dict):
        return
    streams = streams + tuple((k, value[k]) for k in sorted(STREAM_KEYS & value.keys()))
    for field, item in value.items():
        if isinstance(item, str):
            if field in DELTA_FIELDS and (
                "delta" in path or field == "delta" or path[-1:] == ("message",)
            ):
                yield (*path, field, *streams), value, field
        else:
            yield from _pieces(item, (*path, field), streams)


def _scrub_group(pieces: list[tuple[int, Any, Any]], scrubber: Scrubber) -> set[int]:
    """Remove the secrets of one joined stream from its pieces; the lines changed."""
    joined = "".join(holder[field] for _, holder, field in pieces)
    if not may_hold_secret(joined) and not any(s in joined for s in scrubber.secrets):
        return set()
    spans = scrubber.spans(joined)
    if not spans:
        return set()
    changed: set[int] = set()
    offset = 0
    for number, holder, field in pieces:
        piece: str = holder[field]
        start, end = offset, offset + len(piece)
        offset = end
        kept: list[str] = []
        position = start
        for s_start, s_end in spans:
            if s_end <= start or s_start >= end:
                continue
            kept.append(joined[position : max(s_start, start)])
            if s_start >= start:
                kept.append(REDACTED)
            position = min(s_end, end)
        if position == start and not kept:
            continue
        kept.append(joined[position:end])
        holder[field] = "".join(kept)
        changed.add(number)
    return changed


# --- approved secret contents ------------------------------------------------------------------

_RESULT_SHAPES = (
    ("tool_call_id", "role", "tool", "content"),  # Chat Completions
    ("call_id", "type", "function_call_output", "output"),  # Responses
    ("tool_use_id", "type", "tool_result", "content"),  # Messages
)


def withhold_results(body: Any, call_ids: Collection[str]) -> Any:
    """`body` with the results of these tool calls replaced by `WITHHELD`, in each provider's
    shape; a body that carries none of them is returned as it is."""
    if not call_ids:
        return body
    if isinstance(body, list):
        return [withhold_results(item, call_ids) for item in body]
    if not isinstance(body, dict):
        return body
    out = {k: withhold_results(v, call_ids) for k, v in body.items()}
    for id_field, kind_field, kind, content_field in _RESULT_SHAPES:
        if out.get(kind_field) == kind and out.get(id_field) in call_ids and content_field in out:
            out[content_field] = WITHHELD
    return out
