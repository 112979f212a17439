"""Images that declare more pixels than they hold: what a hostile client or server sends.

Each is a few bytes whose header claims a huge size. `png_declaring` has a real IHDR but
garbage where its pixels should be, so a decoder that reached it would fail with a zlib error
(or, handed it whole, spend seconds and gigabytes on a real one): a refusal that names the
declared size proves nothing decoded it.
"""

from __future__ import annotations

import base64
import struct
import zlib


def chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk, its CRC right."""
    crc = struct.pack(">I", zlib.crc32(kind + data))
    return struct.pack(">I", len(data)) + kind + data + crc


def png_declaring(width: int, height: int) -> bytes:
    """A PNG whose header declares `width` x `height` RGB pixels and whose IDAT is garbage."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    garbage = bytes(range(256)) * 4
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", garbage)
        + chunk(b"IEND", b"")
    )


def gif(screen: tuple[int, int], frame: tuple[int, int]) -> bytes:
    """A GIF89a with a `screen`-sized logical screen and one `frame`-sized image, 2 colours."""
    head = b"GIF89a" + struct.pack("<HHBBB", *screen, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    descriptor = b"\x2c" + struct.pack("<HHHHB", 0, 0, *frame, 0)
    pixels = b"\x02\x02\x44\x01\x00"  # LZW minimum code size 2, one tiny block
    return head + descriptor + pixels + b"\x3b"


PNG_13000 = png_declaring(13000, 13000)
"""The size that took 12-17 s and 1.4 GB to decode, in about 1 KB."""
GIF_SCREEN_BOMB = gif((65535, 65535), (1, 1))
"""A 65535x65535 logical screen in 0.1 KB: Pillow refuses it as a decompression bomb."""
GIF_FRAME_BOMB = gif((1, 1), (10000, 10000))
"""A 1x1 screen whose frame is 10000x10000: the header says 1x1, Pillow's lazy size (which
grows to hold the frame) says otherwise, below the limit where Pillow itself refuses."""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
