"""Cell outputs and kernel text as a model should see them: short, plain, and never base64.

Stream text keeps only what a terminal would show (ANSI colours removed, `\\r` progress lines
collapsed) and is cut with a marker; images become `[image/png 640x480]`, their size read from
the bytes' header; HTML becomes `[text/html N chars]` beside the text/plain that usually comes
with it; any other binary payload is only named and measured. The images themselves travel
beside the text as `Image` attachments (`output_images`), which only a model that accepts
images is sent.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...messages import Image
from ...models.capabilities import MAX_IMAGE_BYTES, MAX_IMAGES
from ...models.image_header import declared_size, image_size, too_large
from ...text import human_bytes, shorten
from .reader_cut import cut_for_reader

MAX_TEXT_CHARS = 2000
"""Characters of one output's text shown by read_cell."""
MAX_TRACEBACK_LINES = 12
"""Lines of a traceback shown (the last ones: where the error happened)."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_TEXT_TYPES = ("text/plain", "text/markdown", "text/latex", "application/json")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_MAGIC = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8",
    "image/gif": b"GIF8",
    "image/webp": b"RIFF",
}
"""How each image type's bytes begin (a WebP file's `RIFF` header names `WEBP` at byte 8)."""


def strip_ansi(text: str) -> str:
    """Remove terminal colour and cursor codes, which are noise to a model."""
    return _ANSI.sub("", text)


def terminal_text(text: str) -> str:
    """What a terminal shows: colours gone, and of each `\\r`-rewritten line only its last state."""
    lines = strip_ansi(text).replace("\r\n", "\n").split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line else line for line in lines)


def clip_output(text: str, limit: int) -> str:
    """Output cut to about `limit` characters where a reader would cut it (`reader_cut`): a
    DataFrame's first and last rows, a traceback's last frames, else the start and the last
    third (where a run ends, an error is printed), with a marker saying how much was cut."""
    return cut_for_reader(text, limit)


def last_lines(lines: list[str], limit: int, what: str = "traceback") -> list[str]:
    """The last `limit` lines (a traceback's end is where the error happened), after a line
    saying how many were cut above them."""
    if len(lines) <= limit:
        return lines
    return [f"… {len(lines) - limit} {what} lines cut …", *lines[len(lines) - limit :]]


def describe_image(mime: str, payload: Any) -> str:
    """`[image/png 640x480]` from a base64 payload; the payload itself is never shown; one
    declaring more pixels than are ever decoded says `: too large to show`."""
    text = "".join(payload) if isinstance(payload, list) else str(payload)
    size = declared_size(text)
    if size is None:
        return f"[{mime} {human_bytes(len(text) * 3 // 4)}]"
    if too_large(size):
        return f"[{mime} {size[0]}x{size[1]}: too large to show]"
    return f"[{mime} {size[0]}x{size[1]}]"


def output_images(
    outputs: Iterable[Mapping[str, Any]], *, limit: int = MAX_IMAGES
) -> tuple[Image, ...]:
    """The images of displays and results (one per output, PNG first), the last `limit` of them;
    one larger than `MAX_IMAGE_BYTES` stays only its `[image/png 640x480]` line."""
    images: list[Image] = []
    for output in outputs:
        if output.get("output_type") not in ("execute_result", "display_data"):
            continue
        data = output.get("data") or {}
        mime = next((m for m in _IMAGE_TYPES if m in data), None)
        if mime is not None:
            image = attached_image(mime, data[mime])
            if image is not None:
                images.append(image)
    return tuple(images[-limit:]) if limit > 0 else ()


def attached_image(mime: str, payload: Any) -> Image | None:
    """A base64 payload (nbformat may split it in lines) as an `Image`, if it is small enough
    and is what its type says: a provider refuses the whole request for one broken image. Its
    header must declare its size, and no more pixels than are ever decoded (`image_header`)."""
    if mime not in _MAGIC:
        return None
    text = "".join(payload) if isinstance(payload, list) else str(payload)
    image = Image(media_type=mime, data=re.sub(r"\s+", "", text))
    if not 0 < image.size <= MAX_IMAGE_BYTES:
        return None
    try:
        raw = base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw.startswith(_MAGIC[mime]) or (mime == "image/webp" and raw[8:12] != b"WEBP"):
        return None
    size = image_size(raw)
    return image if size is not None and not too_large(size) else None


def describe_data(data: Mapping[str, Any], *, limit: int = MAX_TEXT_CHARS) -> list[str]:
    """The parts of a mime bundle a model can use: text truncated, everything else named."""
    parts: list[str] = []
    for mime, payload in data.items():
        if mime in _IMAGE_TYPES:
            parts.append(describe_image(mime, payload))
        elif mime in _TEXT_TYPES:
            continue  # shown after the placeholders, below
        elif mime == "application/vnd.jupyter.widget-view+json":
            parts.append("[widget]")
        else:
            parts.append(f"[{mime} {len(_as_text(payload, mime)):,} chars]")
    for mime in _TEXT_TYPES:
        if mime in data:
            text = terminal_text(_as_text(data[mime], mime))
            label = "" if mime == "text/plain" else f"{mime}:\n"
            parts.append(label + clip_output(text, limit))
    return parts


def describe_output(output: Mapping[str, Any], *, limit: int = MAX_TEXT_CHARS) -> str:
    """One nbformat output, summarised for read_cell."""
    kind = output.get("output_type")
    if kind == "stream":
        text = terminal_text(_as_text(output.get("text", "")))
        return f"[{output.get('name', 'stdout')}]\n{clip_output(text.rstrip(chr(10)), limit)}"
    if kind == "error":
        return describe_error(
            str(output.get("ename", "")), str(output.get("evalue", "")), output.get("traceback")
        )
    if kind in ("execute_result", "display_data"):
        label = "[result]" if kind == "execute_result" else "[display]"
        return "\n".join([label, *describe_data(output.get("data", {}), limit=limit)])
    return f"[{kind} output]"


def describe_error(ename: str, evalue: str, traceback: Any = None) -> str:
    """`ValueError: bad value` and the last lines of the traceback, without colour codes."""
    head = f"[error] {ename}: {evalue}" if evalue else f"[error] {ename}"
    if not traceback:
        return head
    text = strip_ansi("\n".join(traceback) if isinstance(traceback, list) else str(traceback))
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join([head, *last_lines(lines, MAX_TRACEBACK_LINES)])


def brief_output(output: Mapping[str, Any]) -> str:
    """A few words per output for list_cells: `stdout 3 lines`, `ValueError`, `image/png 64x64`."""
    kind = output.get("output_type")
    if kind == "stream":
        text = terminal_text(_as_text(output.get("text", ""))).rstrip("\n")
        return f"{output.get('name', 'stdout')} {text.count(chr(10)) + 1} lines"
    if kind == "error":
        return f"error {output.get('ename', '')}".rstrip()
    if kind in ("execute_result", "display_data"):
        data = output.get("data", {})
        for mime in _IMAGE_TYPES:
            if mime in data:
                return describe_image(mime, data[mime]).strip("[]")
        if "text/html" in data:
            return "text/html"
        if "text/plain" in data:
            first = _as_text(data["text/plain"]).strip().split("\n", 1)[0]
            return "result " + json.dumps(shorten(first, 41))
        return ", ".join(data) or "empty"
    return str(kind)


def _as_text(payload: Any, mime: str = "") -> str:
    """Text of a payload: nbformat may keep it as a list of lines; JSON data is dumped."""
    if mime == "application/json" or isinstance(payload, dict):
        return json.dumps(payload, indent=1, ensure_ascii=False, default=str)
    if isinstance(payload, list):
        return "".join(map(str, payload))
    return payload if isinstance(payload, str) else str(payload)
