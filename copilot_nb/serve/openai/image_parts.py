"""A client's image content parts, turned into our `Image` and the line that describes it: pure,
no I/O.

Both APIs send an image as a URL: Chat Completions in `image_url.url`, the Responses API in
`input_image.image_url`. A `data:` URL carries the image itself and becomes an `Image`, which the
model layer scales to the upstream family's size and sends as that wire's native block (or, to a
model without vision, only its `[image/png 640x480]` line). A remote `http(s)` URL is refused:
the proxy fetches nothing on a client's word (a fetch from the server's network is a request
forgery waiting to happen), and passing it through would leave it unscaled and unchecked for
the wires that take no URLs (Anthropic's base64 blocks, Copilot's limits). `detail` is read and
ignored: each image is scaled to what the upstream model uses. An image whose header declares
more pixels than are ever decoded (`MAX_IMAGE_PIXELS`) is refused before anything decodes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...messages import Image
from ...models.capabilities import IMAGE_SIDES, IMAGE_TYPES, MAX_IMAGE_BYTES
from ...models.image_header import MAX_IMAGE_PIXELS, declared_size, too_large
from ...text import human_bytes
from ...tools.views.outputs import attached_image, describe_image
from .api_errors import ApiError, invalid_type, missing

_DATA_URL = re.compile(
    r"data:(?P<type>[\w.+-]+/[\w.+-]+)(?P<params>(?:;[^,;]*)*),(?P<data>.*)", re.S
)
_TYPES = ", ".join(IMAGE_TYPES)
_LONGEST_SIDE = max(long_side for long_side, _ in IMAGE_SIDES.values())


def url_image(url: object, at: str) -> Image:
    """The image a `data:` URL holds; a refusal naming `at` (the URL's field) for a remote URL,
    another media type, a header declaring more pixels than are ever decoded, or bytes that are
    not the image they say."""
    if url is None:
        raise missing(at, "send the image as a data URL: data:image/png;base64,...")
    if not isinstance(url, str):
        raise invalid_type(at, "a data URL (data:image/png;base64,...)", url)
    if re.match(r"(?i)https?://", url):
        why = (
            f"'{at}' is a remote URL: this proxy fetches nothing on a client's word; read the "
            "image yourself and send its bytes as a data URL (data:image/png;base64,...)."
        )
        raise ApiError(why, param=at, code="unsupported_value")
    found = _DATA_URL.fullmatch(url)
    if found is None:
        why = f"'{at}' is not a data URL; send the image as data:image/png;base64,..."
        raise ApiError(why, param=at, code="invalid_value")
    media_type = found["type"].lower()
    if media_type not in IMAGE_TYPES or ";base64" not in found["params"].lower():
        why = f"'{at}' is {media_type} without base64 or of a type no model takes; send {_TYPES}"
        raise ApiError(
            f"{why} as base64 (data:image/png;base64,...).", param=at, code="invalid_value"
        )
    size = declared_size(found["data"])
    if size is not None and too_large(size):
        why = (
            f"'{at}' is a {media_type} of {size[0]}x{size[1]} pixels, more than the "
            f"{MAX_IMAGE_PIXELS:,} this proxy decodes; scale it down (no model uses more than "
            f"{_LONGEST_SIDE} px on the long side) and send it again."
        )
        raise ApiError(why, param=at, code="invalid_image")
    image = attached_image(media_type, found["data"])
    if image is None:
        why = (
            f"'{at}' is not a readable {media_type} of at most {human_bytes(MAX_IMAGE_BYTES)}: "
            "its base64 does not decode to such an image; send the file's bytes as they are."
        )
        raise ApiError(why, param=at, code="invalid_image")
    return image


def misplaced(at: str, where: str) -> ApiError:
    """An image part in a message that takes none; `where` says which messages do."""
    why = f"'{at}' is an image: only {where} carries images; send it in one."
    return ApiError(why, param=f"{at}.type", code="unsupported_value")


def read_parts(
    parts: Sequence[Any], at: str, read: Callable[[Any, str], str | Image]
) -> tuple[str, tuple[Image, ...]]:
    """A content array, each part read by `read` (text or an image) at its own path, joined."""
    return joined(read(part, f"{at}[{j}]") for j, part in enumerate(parts))


def description(image: Image) -> str:
    """The line a transcript and a model without vision read for the image."""
    return describe_image(image.media_type, image.data)


def joined(pieces: Iterable[str | Image]) -> tuple[str, tuple[Image, ...]]:
    """Text parts joined as they are, each image's line on a line of its own; and the images."""
    text, images, after_image = "", [], False
    for piece in pieces:
        if isinstance(piece, Image):
            images.append(piece)
            text += ("\n" if text and not text.endswith("\n") else "") + description(piece)
        elif after_image and piece and not piece.startswith("\n"):
            text += "\n" + piece
        else:
            text += piece
        after_image = isinstance(piece, Image)
    return text, tuple(images)
