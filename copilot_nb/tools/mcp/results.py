"""An MCP server's answer as the model reads it: text, with everything else summarised.

Text blocks pass through; images and audio become `[image/png 640x480]`-style lines (never
base64 in the text; the images also travel beside it, `ToolOutput.images`, for a model that
accepts images); embedded resources show their text or their size; links show their URI;
structured content is shown as JSON unless a text block already carries it; `isError` makes an
error result. The whole is clipped with a marker, as a file read is, so one server cannot flood
the context window. Pure: works on the SDK's result objects by their fields alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...messages import Image
from ...models.capabilities import MAX_IMAGES
from ...text import clip, first_line, human_bytes
from ..registry import ToolOutput
from ..views.outputs import attached_image, describe_image

MAX_RESULT_CHARS = 100_000
"""The most of one result the model reads (the same bound as a file read)."""


def tool_output(result: Any, *, label: str, limit: int = MAX_RESULT_CHARS) -> ToolOutput:
    """A `CallToolResult` as a tool result; `label` (`server__tool`) names it in errors."""
    parts = list(describe_blocks(getattr(result, "content", None) or []))
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        shown = json.dumps(structured, ensure_ascii=False, indent=1)
        if not _carried(parts, structured):
            parts.append(f"structured content:\n{shown}")
    text = "\n".join(parts) or "(the tool returned nothing)"
    failed = bool(getattr(result, "is_error", False))
    if failed:
        text = f"{label} failed: {text}"
    return ToolOutput(
        content=clip(text, limit),
        is_error=failed,
        summary=first_line(text, 80),
        images=block_images(getattr(result, "content", None) or []),
    )


def block_images(blocks: Iterable[Any]) -> tuple[Image, ...]:
    """The image blocks as images (the last few, each within the size a model is sent)."""
    images = []
    for block in blocks:
        if getattr(block, "type", "") == "image":
            image = attached_image(str(block.mime_type), block.data)
            if image is not None:
                images.append(image)
    return tuple(images[-MAX_IMAGES:])


def describe_blocks(blocks: Iterable[Any]) -> Iterable[str]:
    """One piece of text per content block."""
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            yield str(block.text)
        elif kind == "image":
            yield describe_image(str(block.mime_type), block.data)
        elif kind == "audio":
            yield f"[{block.mime_type} audio, {human_bytes(_decoded_size(str(block.data)))}]"
        elif kind == "resource_link":
            yield f"[resource {block.uri}" + (f" ({block.name})" if block.name else "") + "]"
        elif kind == "resource":
            yield describe_contents(block.resource)
        else:
            yield f"[{kind or 'unknown'} content]"


def describe_contents(contents: Any) -> str:
    """A resource's contents: its text, or what its binary data is."""
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return text
    mime = getattr(contents, "mime_type", None) or "application/octet-stream"
    blob = str(getattr(contents, "blob", ""))
    if mime.startswith("image/"):
        return describe_image(mime, blob)
    return f"[{mime} {human_bytes(_decoded_size(blob))} at {contents.uri}]"


def _carried(parts: list[str], value: Any) -> bool:
    """Whether the text blocks already say what the structured content holds: servers send
    both, and the SDK wraps a plain return value as `{"result": value}`, a list as one block per
    item."""
    if isinstance(value, dict) and list(value) == ["result"]:
        inner = value["result"]
        split = isinstance(inner, list) and len(inner) == len(parts)
        if split and all(_same(part, item) for part, item in zip(parts, inner, strict=True)):
            return True
        if any(_same(part, inner) for part in parts):
            return True
    return any(_same(part, value) for part in parts)


def _same(text: str, value: Any) -> bool:
    """`text` is `value`, as itself (a string) or as JSON of the same types (`1` is not `true`)."""
    if isinstance(value, str) and text == value:
        return True
    try:
        parsed = json.loads(text)
    except (ValueError, TypeError):
        return False
    return _canonical(parsed) == _canonical(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _decoded_size(data: str) -> int:
    """Bytes a base64 text stands for."""
    compact = data.strip()
    return len(compact) * 3 // 4 - compact[-2:].count("=")
