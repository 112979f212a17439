"""An image declaring more pixels than it is worth decoding is never decoded, and no image
error fails a request: a header is read first, then Pillow's lazy size, and whatever Pillow
raises on bytes from elsewhere stays inside the image's own fate (sent as it is, or not)."""

from __future__ import annotations

import base64
import io
import struct

import pytest
from PIL import Image as Pillow

from copilot_nb.messages import Image
from copilot_nb.models.image_fit import fit_image
from copilot_nb.models.image_header import MAX_IMAGE_PIXELS, image_size
from copilot_nb.tools.views.outputs import attached_image, describe_image, output_images
from tests.image_bombs import GIF_FRAME_BOMB, GIF_SCREEN_BOMB, PNG_13000, b64, gif, png_declaring
from tests.notebook_samples import png


def fit(image: Image) -> Image | None:
    return fit_image(image, max_side=1568, max_bytes=5 * 1024 * 1024)


def encoded(picture: Pillow.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, format=kind, **options)
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        pytest.param(PNG_13000, "image/png", id="png 13000x13000"),
        pytest.param(GIF_SCREEN_BOMB, "image/gif", id="gif screen 65535x65535"),
        pytest.param(GIF_FRAME_BOMB, "image/gif", id="gif frame 10000x10000"),
    ],
)
def test_an_image_declaring_too_many_pixels_is_not_sent_and_nothing_raises(data, mime) -> None:
    assert fit(Image(media_type=mime, data=b64(data))) is None


def test_an_image_within_the_budget_is_still_scaled_to_the_familys_size() -> None:
    side = int(MAX_IMAGE_PIXELS**0.5) - 1
    wide = Image(media_type="image/png", data=b64(encoded(Pillow.new("L", (side, 8)), "PNG")))
    fitted = fit_image(wide, max_side=1000, max_bytes=5 * 1024 * 1024)
    assert fitted is not None
    assert Pillow.open(io.BytesIO(base64.b64decode(fitted.data))).size == (1000, 2)


def test_a_truncated_image_fails_no_request_it_is_sent_as_it_is() -> None:
    """Pillow raises as it decodes the missing half; the image goes on as the bytes it is."""
    whole = encoded(Pillow.effect_noise((2400, 1600), 64).convert("RGB"), "PNG")
    half = Image(media_type="image/png", data=b64(whole[: len(whole) // 2]))
    assert fit(half) is half
    broken = Image(media_type="image/gif", data=b64(gif((3, 2), (3, 2))))
    assert fit(broken) is broken


def test_each_type_declares_its_size_in_its_header() -> None:
    picture = Pillow.new("RGB", (300, 200), "white")
    for kind, options in (("WEBP", {"lossless": False}), ("WEBP", {"lossless": True})):
        assert image_size(encoded(picture, kind, **options)) == (300, 200), options
    frames = [Pillow.new("RGB", (300, 200), "black")]
    animated = encoded(picture, "WEBP", save_all=True, append_images=frames, duration=10)
    assert animated[12:16] == b"VP8X" and image_size(animated) == (300, 200)
    assert image_size(encoded(picture, "JPEG", progressive=True)) == (300, 200)
    assert image_size(b"GIF89a" + struct.pack("<HH", 65535, 65535)) == (65535, 65535)


def test_the_line_says_too_large_and_no_image_travels_with_it() -> None:
    assert describe_image("image/png", b64(PNG_13000)) == (
        "[image/png 13000x13000: too large to show]"
    )
    assert describe_image("image/gif", b64(GIF_SCREEN_BOMB)) == (
        "[image/gif 65535x65535: too large to show]"
    )
    assert describe_image("image/png", b64(png(640, 480))) == "[image/png 640x480]"
    assert attached_image("image/png", b64(PNG_13000)) is None
    assert attached_image("image/gif", b64(GIF_SCREEN_BOMB)) is None
    assert attached_image("image/png", b64(png_declaring(5000, 5000))) is not None
    display = {"output_type": "display_data", "data": {"image/png": b64(PNG_13000)}}
    assert output_images([display]) == ()
