"""An image's size as its header declares it, and whether that is more than we decode (pure).

An image from elsewhere (a proxy client's `data:` URL, an MCP server's result, a cell's output)
can declare any size in a few bytes: a 641 KB PNG of 13000x13000 took 12-17 s and 1.4 GB to
decode, and a 0.1 KB GIF declaring a 65535x65535 screen made Pillow raise. So the size is read
from the header first, without a decoder, and an image declaring more than `MAX_IMAGE_PIXELS`
is never decoded nor sent: it stays its line, `[image/png 13000x13000: too large to show]`.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct

MAX_IMAGE_PIXELS = 25_000_000
"""The most pixels an image may declare to be decoded and sent: a 24-megapixel camera's photo
(6000x4000), about 1 s and 120 MB to decode and scale; a model family uses 3072 px on the long
side at most, so a larger image is never needed whole."""
HEADER_B64_CHARS = 96_000
"""Base64 characters decoded to find an image's size (a JPEG's EXIF block comes first)."""

_JPEG_FRAMES = frozenset(
    (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF)
)
"""The start-of-frame markers, which hold a JPEG's size."""


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG, GIF or WebP header, or None if it is not one of those."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return width, height
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def declared_size(payload: str) -> tuple[int, int] | None:
    """The size a base64 image's header declares (whitespace allowed), decoding only its start."""
    compact = re.sub(r"\s+", "", payload[: HEADER_B64_CHARS + 2000])[:HEADER_B64_CHARS]
    compact = compact[: len(compact) - len(compact) % 4]
    try:
        return image_size(base64.b64decode(compact))
    except (binascii.Error, ValueError):
        return None


def too_large(size: tuple[int, int] | None) -> bool:
    """Whether a declared size is more pixels than we decode."""
    return size is not None and size[0] * size[1] > MAX_IMAGE_PIXELS


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker, which holds the size."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xDA)):  # no length field
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_FRAMES:
            if at + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """The canvas of an extended WebP (`VP8X`), else the frame of a lossy (`VP8 `) or lossless
    (`VP8L`) one."""
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if kind == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if kind == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None
