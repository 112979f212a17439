"""What a recording of the agent's traffic may hold: one set of rules for every file we write.

A cassette (and, in time, a saved conversation) keeps requests and responses so they can be read
and replayed; none of it may keep a secret. Three rules, each a pure function of what is written:

- `Scrubber`: the machine's paths become placeholders and secrets become `[redacted]`, in every
  string: the value of every secret-named environment variable (`text.is_secret_name`), whatever
  its form; every value this process withheld (`WITHHELD_VALUES`: what an approved secret read
  returned, wherever the model repeats it later); and every `text.SECRET_VALUE` format.
- `scrub_stream`: a streamed response sends a reply in pieces, and a key split across two pieces
  passes a scan of each. The pieces of each stream (text, tool arguments, reasoning) are joined,
  secrets found in the joined text, and the parts of each piece that belong to a secret removed
  (the first keeps `[redacted]`), so the reassembled reply reads as a scrubbed whole reply would,
  and the same decoders still replay it.
- `withhold_results`: a secret file's contents the user approved reading reach the model, not the
  recording: the tool result is replaced by a placeholder in every request body that carries it,
  and its values join `WITHHELD_VALUES`, so the model repeating one later is redacted too.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..text import SECRET_VALUE, is_secret_name, may_hold_secret

REDACTED = "[redacted]"
WORKSPACE = "<workspace>"
HOME = "<home>"
WITHHELD = "[secret content the user approved reading: not recorded]"
DURATION = re.compile(r"\bin \d+\.\d+ s\b")
"""How long a run took, as our tools tell the model (`ran cell … in 0.53 s`): never the same twice,
so a recording compares (and keeps) it as `in <seconds> s`."""
MIN_ENVIRONMENT_SECRET = 8
"""A secret-named environment variable's value this long or longer is redacted wherever it appears
(shorter ones, such as `XDG_SESSION_ID=3`, would redact digits and words everywhere)."""
MIN_WITHHELD_VALUE = 10
"""A value an approved secret read returned is redacted later only from this length: `localhost`
and `127.0.0.1` (9 characters), `true`, `5432` stay readable; a key or password is longer."""


_PATH = re.compile(r"^(?:[/~]|[A-Za-z]:[\\/])")
"""An absolute path: what `JPY_SESSION_NAME` (the notebook), `SSH_AUTH_SOCK` or
`GOOGLE_APPLICATION_CREDENTIALS` hold. It names where a secret is, and is not one: redacting it
would hide the notebook's own path, which becomes `<workspace>/…` instead."""


def environment_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of every secret-named variable of the environment (`AWS_SECRET_ACCESS_KEY`,
    `AZURE_OPENAI_API_KEY`, `GITHUB_TOKEN`: the names the kernel's masking hides), longest first;
    not a path."""
    found = {
        value
        for name, value in environ.items()
        if is_secret_name(name) and len(value) >= MIN_ENVIRONMENT_SECRET and not _PATH.match(value)
    }
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


_ASSIGNMENT = re.compile(
    r"""^\s*(?:\d+\t)?\s*(?:export\s+)?["']?[A-Za-z_][\w.\-]*["']?\s*(?:=|:)\s*(?P<value>.*?)\s*$"""
)
"""`KEY=VALUE`, `export KEY="VALUE"`, `key: value`, `"key": "value",` (a `.env`, an INI or YAML
file, JSON), after `read_file`'s line number."""
_NUMBERED = re.compile(r"^\s*\d+\t")


def withheld_values(content: str) -> set[str]:
    """The values in a secret's contents: each `KEY=VALUE` line's value (unquoted, without a
    trailing comment) and each line that is one token (a key file), at least
    `MIN_WITHHELD_VALUE` long and not a path."""
    found: set[str] = set()
    for line in content.splitlines():
        match = _ASSIGNMENT.match(line)
        if match is not None:
            value = _unquoted(match.group("value").rstrip(","))
        else:
            value = _NUMBERED.sub("", line).strip()
            if any(c.isspace() for c in value):
                continue
        if len(value) >= MIN_WITHHELD_VALUE and not _PATH.match(value):
            found.add(value)
    return found


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.split(" #", 1)[0].strip()


class WithheldValues:
    """Every value this process withheld from its recordings: once the user approves reading a
    secret, its values are redacted in every cassette and transcript written afterwards, also
    where the model repeats them in its own words. One registry, read by every `Scrubber.here()`
    when it scrubs (not when it is made), so a value read mid-turn is redacted in that turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: tuple[str, ...] = ()

    def add(self, content: str) -> None:
        """Remember the values in a secret's contents (`withheld_values`)."""
        found = withheld_values(content)
        with self._lock:
            if found - set(self._values):
                merged = found | set(self._values)
                self._values = tuple(sorted(merged, key=lambda v: (-len(v), v)))

    def values(self) -> tuple[str, ...]:
        """Longest first, so a value that holds another is redacted whole."""
        return self._values


WITHHELD_VALUES = WithheldValues()
"""The process's registry: the kernel is the session, and what it withheld stays withheld."""


@dataclass(frozen=True)
class Scrubber:
    """Replaces the machine's paths with placeholders and secrets with `[redacted]` in text."""

    places: tuple[tuple[str, str], ...]
    secrets: tuple[str, ...]
    withheld: WithheldValues | None = None

    @property
    def known(self) -> tuple[str, ...]:
        """The literal secrets to redact now: the environment's and every value withheld so far."""
        if self.withheld is None:
            return self.secrets
        return self.secrets + self.withheld.values()

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
        return cls(tuple(ordered), environment_secrets(env), WITHHELD_VALUES)

    def text(self, value: str) -> str:
        for secret in self.known:
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
        for secret in self.known:
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
    if not may_hold_secret(joined) and not any(s in joined for s in scrubber.known):
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


def withhold_results(
    body: Any, call_ids: Collection[str], registry: WithheldValues | None = None
) -> Any:
    """`body` with the results of these tool calls replaced by `WITHHELD`, in each provider's
    shape; a body that carries none of them is returned as it is. What is withheld becomes
    known to `registry` (the process's, unless another is named), so the values the model read
    there are redacted wherever it repeats them later, in cassettes and transcripts alike."""
    if not call_ids:
        return body
    registry = WITHHELD_VALUES if registry is None else registry
    if isinstance(body, list):
        return [withhold_results(item, call_ids, registry) for item in body]
    if not isinstance(body, dict):
        return body
    out = {k: withhold_results(v, call_ids, registry) for k, v in body.items()}
    for id_field, kind_field, kind, content_field in _RESULT_SHAPES:
        if out.get(kind_field) == kind and out.get(id_field) in call_ids and content_field in out:
            registry.add(_text_of(out[content_field]))
            out[content_field] = WITHHELD
    return out


def _text_of(content: Any) -> str:
    """A tool result's text: a string, or the text parts of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        return "\n".join(_text_of(v) for k, v in content.items() if k in ("text", "content"))
    return ""
