"""An image made the size a model uses: scaled to its family's long side, and to its bytes.

Providers scale a large image down themselves (Anthropic past 1568 px on the long side, OpenAI
to fit 2048 px and then 768 px on the short side), so the pixels beyond that are paid for in
upload and latency and never seen. Each image is scaled once per size (an LRU cache keyed by
its bytes), with Pillow: matplotlib, which draws the plots a notebook shows, depends on it.
Without Pillow an image is sent as it is, if its bytes fit.

An image declaring more pixels than `MAX_IMAGE_PIXELS` (its header read first, then Pillow's
lazy `open`, which decodes nothing) is neither decoded nor sent; nor is one Pillow refuses as a
decompression bomb. Whatever else Pillow raises on bytes a client or a server chose means only
that this image cannot be scaled: it is sent as it is if its bytes fit, as before, and no
request fails for it.
"""

from __future__ import annotations

import base64
import functools
import io
import warnings
from dataclasses import replace
from typing import Any

from ..messages import Image
from .image_header import declared_size, too_large

SHRINK_STEPS = 4
"""Tries at 0.7 of the last scale, after the first, to fit an image into the bytes allowed."""


def fit_image(
    image: Image, *, max_side: int, max_bytes: int, max_short_side: int | None = None
) -> Image | None:
    """`image` no larger than `max_side` px on its long side (and `max_short_side` on its
    short one), nor than `max_bytes`; the same object when it already fits; None when it
    cannot be made to fit (more bytes than allowed and not scalable, or more pixels than are
    ever decoded)."""
    fitted = _fit(image.media_type, image.data, max_side, max_bytes, max_short_side or 0)
    if fitted is None:
        return None
    media_type, data = fitted
    if data == image.data:
        return image
    return replace(image, media_type=media_type, data=data)


@functools.lru_cache(maxsize=64)
def _fit(
    media_type: str, data: str, max_side: int, max_bytes: int, max_short: int
) -> tuple[str, str] | None:
    as_it_is = (media_type, data) if len(data) * 3 // 4 <= max_bytes else None
    if too_large(declared_size(data)):
        return None
    try:
        from PIL import Image as Pillow
    except ImportError:  # no Pillow: as it is, if its bytes fit
        return as_it_is
    try:
        raw = base64.b64decode(data, validate=True)
        with warnings.catch_warnings():  # its size is judged below, by a smaller budget
            warnings.simplefilter("ignore", Pillow.DecompressionBombWarning)
            picture = Pillow.open(io.BytesIO(raw))  # the header only: nothing is decoded yet
    except Pillow.DecompressionBombError:
        return None
    except Exception:  # Pillow read bytes from elsewhere: whatever it raises, not an image
        return as_it_is
    if too_large(picture.size):  # a JPEG's later frame header, a GIF frame past its screen
        return None
    try:
        return _scaled(picture, media_type, raw, data, max_side, max_bytes, max_short)
    except Exception:  # a truncated or corrupt image fails only as it is decoded
        return as_it_is


def _scaled(
    picture: Any,
    media_type: str,
    raw: bytes,
    data: str,
    max_side: int,
    max_bytes: int,
    max_short: int,
) -> tuple[str, str] | None:
    """The picture at the family's size and within `max_bytes`, trying smaller scales."""
    from PIL import Image as Pillow

    picture.load()
    width, height = picture.size
    scale = min(1.0, max_side / max(width, height))
    if max_short:
        scale = min(scale, max_short / min(width, height))
    if scale >= 1.0 and len(raw) <= max_bytes:
        return media_type, data
    for _ in range(SHRINK_STEPS + 1):
        size = (max(1, round(width * min(scale, 1.0))), max(1, round(height * min(scale, 1.0))))
        encoded = _encode(picture.resize(size, Pillow.Resampling.LANCZOS), media_type)
        if len(encoded[1]) <= max_bytes:
            return encoded[0], base64.b64encode(encoded[1]).decode()
        scale = min(scale, 1.0) * 0.7
    return None


def _encode(picture: object, media_type: str) -> tuple[str, bytes]:
    """A JPEG stays a JPEG; anything else (a plot's PNG, a GIF's first frame) becomes a PNG."""
    out = io.BytesIO()
    if getattr(picture, "mode", "RGB") not in ("RGB", "RGBA", "L", "LA", "P"):
        picture = picture.convert("RGBA")  # type: ignore[attr-defined]
    if media_type == "image/jpeg":
        picture.convert("RGB").save(out, format="JPEG", quality=85, optimize=True)  # type: ignore[attr-defined]
        return "image/jpeg", out.getvalue()
    picture.save(out, format="PNG", optimize=True)  # type: ignore[attr-defined]
    return "image/png", out.getvalue()
